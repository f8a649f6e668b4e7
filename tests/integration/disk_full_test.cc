// A full disk under the real daemon: its data folder on a real 8 MiB tmpfs. Training until the
// disk is full must answer 507 (never 500, never an abort), classify must go on, /readyz must say
// degraded, and once the tmpfs is grown training must resume by itself, without a restart, with
// every acknowledged train kept and the folder consistent. Mounting needs root (CI runs as root);
// elsewhere the test is skipped with the reason.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

// Message `n`: 300 words of random letters, so that every train adds new tokens and the
// write-ahead log grows fast.
std::string MessageText(std::uint64_t n) {
  std::mt19937_64 random(n + 1);
  std::string text = "Subject: message " + std::to_string(n) + "\n\n";
  for (int w = 0; w < 300; ++w) {
    for (int c = 0, length = 4 + static_cast<int>(random() % 8); c < length; ++c) {
      text += static_cast<char>('a' + random() % 26);
    }
    text += ' ';
  }
  return text;
}

class Tmpfs {
 public:
  // Mounts a tmpfs of `megabytes` on `path`; error() says why not.
  Tmpfs(const std::string& path, int megabytes) : path_(path) {
    const std::string options = "size=" + std::to_string(megabytes) + "m";
    if (::mount("tmpfs", path.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      error_ = std::strerror(errno);
    }
  }
  ~Tmpfs() {
    if (error_.empty()) ::umount2(path_.c_str(), MNT_DETACH);
  }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] bool Resize(int megabytes) const {
    const std::string options = "size=" + std::to_string(megabytes) + "m";
    return ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT, options.c_str()) == 0;
  }

 private:
  std::string path_;
  std::string error_;
};

TEST(DiskFullTest, TrainingPausesWithA507AndResumesWhenSpaceReturns) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root; CI runs as root";
  TempDir dir;
  const std::string mount_point = dir.Join("small");
  std::filesystem::create_directories(mount_point);
  Tmpfs tmpfs(mount_point, 8);
  if (!tmpfs.error().empty()) GTEST_SKIP() << "cannot mount a tmpfs here: " << tmpfs.error();
  const std::string data = mount_point + "/model";

  const auto start = [&] {
    auto daemon = DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", data, "--threads",
                                        "2", "--backup-dir", dir.Join("backups")});
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  };
  DaemonProcess daemon = start();
  HttpClient client(daemon.port());
  const auto train = [&](std::uint64_t n) {
    return client.Send(
        http::verb::post,
        "/train?label=" + std::string(n % 2 ? "spam" : "ham") + "&id=m" + std::to_string(n),
        MessageText(n));
  };

  // Fill the disk.
  std::vector<std::uint64_t> acknowledged;
  std::uint64_t n = 0;
  HttpResponse full;
  for (; n < 100000; ++n) {
    HttpResponse response;
    try {
      response = train(n);
    } catch (const std::exception& e) {
      FAIL() << "train " << n << ": " << e.what() << "\n" << daemon.Log();
    }
    if (response.result() == http::status::ok) {
      acknowledged.push_back(n);
      continue;
    }
    full = std::move(response);
    break;
  }
  ASSERT_EQ(full.result(), http::status::insufficient_storage) << full.body();
  EXPECT_FALSE(full[http::field::retry_after].empty());
  const json::object error = json::parse(full.body()).at("error").as_object();
  EXPECT_EQ(error.at("code").as_string(), "insufficient_storage");
  EXPECT_NE(std::string_view(error.at("message").as_string()).find(data), std::string_view::npos);
  std::printf("[ disk full ] 507 after %zu acknowledged trains\n", acknowledged.size());

  // Stopped, not dead: more trains get 507 (never 500), classify and the ledger go on.
  for (int k = 0; k < 20; ++k) {
    ASSERT_EQ(train(++n).result(), http::status::insufficient_storage);
  }
  EXPECT_EQ(client.Send(http::verb::post, "/classify", MessageText(3)).result(), http::status::ok);
  const HttpResponse ready = client.Send(http::verb::get, "/readyz");
  EXPECT_EQ(ready.result(), http::status::service_unavailable);
  EXPECT_NE(ready.body().find("read_only: disk full"), std::string::npos) << ready.body();
  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
  EXPECT_NE(client.Send(http::verb::get, "/metrics").body().find("nbspamd_store_writable 0"),
            std::string::npos);

  // Space returns: training resumes by itself.
  ASSERT_TRUE(tmpfs.Resize(64));
  const auto grown = std::chrono::steady_clock::now();
  const auto deadline = grown + std::chrono::seconds(30);
  while (client.Send(http::verb::get, "/readyz").result() != http::status::ok) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "training did not resume\n"
                                                          << daemon.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::chrono::duration<double> resumed = std::chrono::steady_clock::now() - grown;
  std::printf("[ disk full ] training resumed %.2f s after the tmpfs grew\n", resumed.count());
  for (int k = 0; k < 20; ++k) {
    ASSERT_EQ(train(++n).result(), http::status::ok);
    acknowledged.push_back(n);
  }
  EXPECT_NE(daemon.Log().find("training paused: disk full"), std::string::npos);
  EXPECT_NE(daemon.Log().find("training resumed"), std::string::npos);

  // Nothing acknowledged is lost, nothing is half-applied.
  ASSERT_EQ(daemon.Terminate(), 0) << daemon.Log();
  const ProcessExit check = RunToExit({"check", "--data-dir", data});
  ASSERT_EQ(check.status, 0) << check.output;
  DaemonProcess again = start();
  HttpClient reader(again.port());
  const json::value listed = reader.GetJson("/admin/learned?source=&limit=10000");
  std::set<std::string> ids;
  for (const json::value& message : listed.at("messages").as_array()) {
    ids.insert(std::string(message.at("id").as_string()));
  }
  for (std::uint64_t a : acknowledged) {
    EXPECT_TRUE(ids.contains("m" + std::to_string(a))) << "acknowledged train m" << a << " lost";
  }
  std::printf("[ disk full ] %zu acknowledged trains, %zu in the ledger after restart, lost 0\n",
              acknowledged.size(), ids.size());
}

}  // namespace
}  // namespace nbspamd::testing
