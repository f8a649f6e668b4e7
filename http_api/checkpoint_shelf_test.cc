// The checkpoints served to joining daemons, through the Router: a real RocksDB model, its
// checkpoint's manifest (position read from the checkpoint, sizes and SHA-256 of the files as
// they are on disk), each file lent as a link for the connection to stream (whole or from a
// Range), and every malformed or unknown id or file name refused with a JSON error before any
// path is built from it. Also the shelf's bounds: how many at once, and expiry.
#include "http_api/checkpoint_shelf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "common/sha256.h"
#include "http_api/checkpoint_manifest.h"
#include "http_api/router.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CheckpointShelfTest : public ::testing::Test {
 protected:
  void Open(CheckpointShelfOptions shelf_options) {
    auto store = storage::RocksdbStore::Open(dir_.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    filter_ = std::make_unique<core::SpamFilter>(std::move(*store), core::SpamFilterOptions{});
    for (int i = 0; i < 20; ++i) {
      auto trained = filter_->Train("cheap pills offer number " + std::to_string(i),
                                    i % 2 == 0 ? "spam" : "ham", "m" + std::to_string(i));
      ASSERT_TRUE(trained.has_value()) << trained.error().message;
    }
    RouterOptions options;
    shelf_options.dir = dir_.Join("model/checkpoints-served");
    shelf_ = std::make_shared<CheckpointShelf>(shelf_options);
    options.checkpoints = shelf_;
    router_ = std::make_unique<Router>(*filter_, options);
  }

  Response Send(http::verb method, const std::string& target, const std::string& range = "") {
    Request request(method, target, 11);
    if (!range.empty()) request.set(http::field::range, range);
    request.prepare_payload();
    return router_->Handle(request);
  }

  CheckpointManifest MakeCheckpoint() {
    const Response response = Send(http::verb::post, "/admin/checkpoint");
    EXPECT_EQ(response.result(), http::status::ok) << response.body();
    auto manifest = ParseCheckpointManifest(response.body());
    EXPECT_TRUE(manifest.has_value()) << response.body();
    return manifest.value_or(CheckpointManifest{});
  }

  void ExpectError(const Response& response, http::status status, std::string_view code) {
    EXPECT_EQ(response.result(), status) << response.body();
    EXPECT_EQ(response[http::field::content_type], "application/json");
    const json::value body = json::parse(response.body());
    EXPECT_EQ(body.at("error").at("code").as_string(), code) << response.body();
  }

  TempDir dir_;
  std::unique_ptr<core::SpamFilter> filter_;
  std::shared_ptr<CheckpointShelf> shelf_;
  std::unique_ptr<Router> router_;
};

TEST_F(CheckpointShelfTest, AManifestDescribesTheFilesOnDiskAndEachIsLentWholeOrFromARange) {
  Open({});
  const CheckpointManifest manifest = MakeCheckpoint();
  ASSERT_FALSE(manifest.files.empty());
  EXPECT_EQ(manifest.position, "");  // A standalone model applied no stream entry.
  const std::string folder = dir_.Join("model/checkpoints-served/" + manifest.id);
  for (const CheckpointFile& file : manifest.files) {
    const auto digest = Sha256OfFile(folder + "/" + file.name);
    ASSERT_TRUE(digest.has_value());
    EXPECT_EQ(digest->size, file.size) << file.name;
    EXPECT_EQ(digest->sha256, file.sha256) << file.name;
  }
  // The biggest file, whole and from its middle.
  const CheckpointFile& big = *std::ranges::max_element(manifest.files, {}, &CheckpointFile::size);
  ASSERT_GT(big.size, 2u);
  const std::string whole_text = FileText(folder + "/" + big.name);
  const std::string target = "/admin/checkpoint/" + manifest.id + "/" + big.name;
  const Response whole = Send(http::verb::get, target);
  EXPECT_EQ(whole.result(), http::status::ok);
  EXPECT_EQ(whole[http::field::accept_ranges], "bytes");
  const std::string link(whole[kBodyFileField]);
  EXPECT_EQ(FileText(link), whole_text);  // A link to the file, for the connection to send.
  std::filesystem::remove(link);
  EXPECT_EQ(FileText(folder + "/" + big.name), whole_text);  // The checkpoint keeps its file.

  const std::uint64_t from = big.size / 2;
  const Response part = Send(http::verb::get, target, "bytes=" + std::to_string(from) + "-");
  EXPECT_EQ(part.result(), http::status::partial_content);
  EXPECT_EQ(part[kBodyFileOffsetField], std::to_string(from));
  EXPECT_EQ(part[http::field::content_range], "bytes " + std::to_string(from) + "-" +
                                                  std::to_string(big.size - 1) + "/" +
                                                  std::to_string(big.size));
  std::filesystem::remove(std::string(part[kBodyFileField]));
  const Response past = Send(http::verb::get, target, "bytes=" + std::to_string(big.size) + "-");
  ExpectError(past, http::status::range_not_satisfiable, "range_not_satisfiable");
  EXPECT_EQ(past[http::field::content_range], "bytes */" + std::to_string(big.size));
}

TEST_F(CheckpointShelfTest, MalformedOrUnknownIdsAndNamesAreRefusedAsJson) {
  Open({});
  const CheckpointManifest manifest = MakeCheckpoint();
  const std::string base = "/admin/checkpoint/" + manifest.id + "/";
  for (const char* name : {"..", ".CURRENT", "%2e%2e", "..%2fCURRENT", "CURRENT%00"}) {
    ExpectError(Send(http::verb::get, base + name), http::status::bad_request, "invalid_argument");
  }
  ExpectError(Send(http::verb::get, "/admin/checkpoint/../CURRENT"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::get, "/admin/checkpoint/ABC/CURRENT"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::get, "/admin/checkpoint/" + std::string(32, 'a') + "/CURRENT"),
              http::status::not_found, "not_found");
  ExpectError(Send(http::verb::get, base + "LOCK"), http::status::not_found, "not_found");
  ExpectError(Send(http::verb::get, base + "CURRENT/more"), http::status::not_found, "not_found");
  ExpectError(Send(http::verb::post, base + "CURRENT"), http::status::method_not_allowed,
              "method_not_allowed");
  // Nothing was linked for any of them.
  for (const auto& entry :
       std::filesystem::directory_iterator(dir_.Join("model/checkpoints-served"))) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".send-")) << entry.path();
  }
}

TEST_F(CheckpointShelfTest, AReleasedCheckpointIsGoneAtOnce) {
  Open({});
  const CheckpointManifest manifest = MakeCheckpoint();
  ExpectError(Send(http::verb::delete_, "/admin/checkpoint/XYZ"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::delete_, "/admin/checkpoint/" + std::string(32, 'b')),
              http::status::not_found, "not_found");
  EXPECT_EQ(shelf_->Size(), 1u);
  const Response released = Send(http::verb::delete_, "/admin/checkpoint/" + manifest.id);
  EXPECT_EQ(released.result(), http::status::ok) << released.body();
  EXPECT_EQ(shelf_->Size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("model/checkpoints-served/" + manifest.id)));
  ExpectError(Send(http::verb::get, "/admin/checkpoint/" + manifest.id + "/CURRENT"),
              http::status::not_found, "not_found");
}

TEST_F(CheckpointShelfTest, AFullShelfRefusesAndAnUnusedCheckpointExpires) {
  Open({.dir = "",  // Set by Open.
        .max_checkpoints = 1,
        .idle_expiry = std::chrono::seconds(1),
        .replace_after = std::chrono::seconds(60)});
  const CheckpointManifest manifest = MakeCheckpoint();
  const Response full = Send(http::verb::post, "/admin/checkpoint");
  ExpectError(full, http::status::service_unavailable, "unavailable");
  EXPECT_FALSE(full[http::field::retry_after].empty());
  EXPECT_EQ(shelf_->Size(), 1u);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (shelf_->Size() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(shelf_->Size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("model/checkpoints-served/" + manifest.id)));
  ExpectError(Send(http::verb::get, "/admin/checkpoint/" + manifest.id + "/CURRENT"),
              http::status::not_found, "not_found");
  EXPECT_NE(MakeCheckpoint().id, manifest.id);  // Room again.
}

TEST(CheckpointShelfAbsentTest, WithoutAShelfTheEndpointsAnswer409) {
  core::SpamFilter filter(std::make_unique<storage::MemoryStore>(), core::SpamFilterOptions{});
  Router router(filter);
  Request request(http::verb::post, "/admin/checkpoint", 11);
  request.prepare_payload();
  const Response response = router.Handle(request);
  EXPECT_EQ(response.result(), http::status::conflict) << response.body();
}

}  // namespace
}  // namespace nbspamd::http_api
