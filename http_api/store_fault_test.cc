// Faults of the machine seen through the HTTP API: a full disk or an I/O error under the
// RocksDB store (a fault-injecting file system) turns training into 507/503 with Retry-After,
// /readyz and /metrics say so, classify goes on, and the StoreWatch brings training back by
// itself once the fault clears. Also the readiness rules on their own.
#include <gtest/gtest.h>

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <thread>

#include "core/readiness.h"
#include "http_api/router.h"
#include "storage/rocksdb_store.h"
#include "storage/testing/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using storage::testing::FaultedFiles;
using storage::testing::FaultInjectingFileSystem;
using storage::testing::InjectedFault;

std::string Message(int i) {
  std::string text = "Subject: note ";
  text += std::to_string(i);
  text += "\n\nword";
  text += std::to_string(i);
  text += " cheap offer meeting notes";
  return text;
}

class StoreFaultTest : public ::testing::Test {
 protected:
  StoreFaultTest() {
    storage::RocksdbStoreOptions store_options;
    store_options.file_system = fs_;
    store_options.resume_free_bytes = 0;
    auto store = storage::RocksdbStore::Open(dir_.Join("model"), store_options);
    EXPECT_TRUE(store.has_value());
    core::SpamFilterOptions options;
    options.store_recovery_interval = std::chrono::milliseconds(20);
    filter_ = std::make_unique<core::SpamFilter>(std::move(*store), options);
    router_ = std::make_unique<Router>(*filter_);
  }

  Response Send(http::verb method, std::string target, std::string body = "") {
    Request request(method, target, 11);
    request.set(http::field::content_type, "text/plain");
    request.body() = std::move(body);
    request.prepare_payload();
    return router_->Handle(request);
  }

  Response Train(int i) {
    return Send(http::verb::post, std::string("/train?label=") + (i % 2 ? "spam" : "ham"),
                Message(i));
  }

  // Waits (up to 10 s) until /readyz answers `status`.
  bool WaitReady(http::status status) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Send(http::verb::get, "/readyz").result() == status) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  TempDir dir_;
  std::shared_ptr<FaultInjectingFileSystem> fs_ = std::make_shared<FaultInjectingFileSystem>();
  std::unique_ptr<core::SpamFilter> filter_;
  std::unique_ptr<Router> router_;
};

TEST_F(StoreFaultTest, FullDiskAnswers507AndResumesByItself) {
  for (int i = 0; i < 6; ++i) ASSERT_EQ(Train(i).result(), http::status::ok);
  EXPECT_EQ(Send(http::verb::get, "/readyz").result(), http::status::ok);

  fs_->Inject(InjectedFault::kNoSpace, FaultedFiles::kWriteAheadLog);
  const Response full = Train(6);
  ASSERT_EQ(full.result(), http::status::insufficient_storage) << full.body();
  EXPECT_EQ(full[http::field::retry_after], "5");
  const json::object error = json::parse(full.body()).as_object().at("error").as_object();
  EXPECT_EQ(error.at("code").as_string(), "insufficient_storage");
  EXPECT_NE(std::string_view(error.at("message").as_string()).find(dir_.Join("model")),
            std::string_view::npos)
      << "the message names the data folder";
  EXPECT_EQ(Send(http::verb::post, "/forget", Message(3)).result(),
            http::status::insufficient_storage);
  EXPECT_EQ(Send(http::verb::post, "/admin/backup").result(), http::status::insufficient_storage);

  // Degraded, alive, still classifying.
  const Response ready = Send(http::verb::get, "/readyz");
  EXPECT_EQ(ready.result(), http::status::service_unavailable);
  const json::object body = json::parse(ready.body()).as_object();
  EXPECT_EQ(body.at("status").as_string(), "degraded");
  EXPECT_TRUE(std::string_view(body.at("degraded").as_array().at(0).as_string())
                  .starts_with("read_only: disk full"))
      << ready.body();
  const Response health = Send(http::verb::get, "/healthz");
  EXPECT_EQ(health.result(), http::status::ok);
  EXPECT_EQ(json::parse(health.body()).at("ready").as_bool(), false);
  EXPECT_EQ(Send(http::verb::post, "/classify", Message(3)).result(), http::status::ok);
  const std::string metrics = Send(http::verb::get, "/metrics").body();
  EXPECT_NE(metrics.find("nbspamd_store_writable 0\n"), std::string::npos);
  EXPECT_NE(metrics.find("nbspamd_store_write_errors_total{kind=\"disk_full\"} 1\n"),
            std::string::npos)
      << metrics;

  fs_->Clear();
  ASSERT_TRUE(WaitReady(http::status::ok)) << "training did not resume by itself";
  EXPECT_EQ(Train(6).result(), http::status::ok);
  const std::string after = Send(http::verb::get, "/metrics").body();
  EXPECT_NE(after.find("nbspamd_store_writable 1\n"), std::string::npos);
  EXPECT_NE(after.find("nbspamd_store_recoveries_total 1\n"), std::string::npos);
  const json::object stats = json::parse(Send(http::verb::get, "/stats").body()).as_object();
  EXPECT_EQ(stats.at("documents").as_int64(), 7);
}

TEST_F(StoreFaultTest, IoErrorAnswers503) {
  ASSERT_EQ(Train(0).result(), http::status::ok);
  fs_->Inject(InjectedFault::kIoError);
  const Response failed = Train(1);
  ASSERT_EQ(failed.result(), http::status::service_unavailable) << failed.body();
  EXPECT_EQ(failed[http::field::retry_after], "5");
  EXPECT_EQ(json::parse(failed.body()).at("error").at("code").as_string(), "unavailable");
  EXPECT_TRUE(WaitReady(http::status::service_unavailable));
  fs_->Clear();
  ASSERT_TRUE(WaitReady(http::status::ok));
  EXPECT_EQ(Train(1).result(), http::status::ok);
}

TEST(ReadinessTest, ReasonsOfEachPart) {
  EXPECT_TRUE(core::ReadinessOf({}, std::nullopt).ready());
  storage::WriteHealth full;
  full.writable = false;
  full.reason = "disk full: x";
  EXPECT_EQ(core::ReadinessOf(full, std::nullopt).degraded,
            std::vector<std::string>{"read_only: disk full: x"});
  core::ClusterStatus cluster;
  cluster.connected = true;
  cluster.lag_seconds = 3;
  EXPECT_TRUE(core::ReadinessOf({}, cluster).ready());
  cluster.lag_seconds = core::kReadyMaxLagSeconds + 15;
  EXPECT_EQ(core::ReadinessOf({}, cluster).degraded, std::vector<std::string>{"cluster: lag 75 s"});
  cluster.connected = false;
  cluster.lag_seconds = 12.4;
  EXPECT_EQ(core::ReadinessOf(full, cluster).degraded,
            (std::vector<std::string>{"read_only: disk full: x",
                                      "cluster: redis unreachable, lag 12 s"}));
  cluster.stream_behind = true;
  cluster.stream_behind_reason = "stream behind this daemon: the training stream lacks 9-0";
  EXPECT_EQ(core::ReadinessOf({}, cluster).degraded,
            std::vector<std::string>{
                "cluster: stream behind this daemon: the training stream lacks 9-0"});
  cluster.gap = true;
  EXPECT_FALSE(core::ReadinessOf({}, cluster).ready());
}

}  // namespace
}  // namespace nbspamd::http_api
