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
#include <filesystem>
#include <fstream>
#include <optional>
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

// Files RocksDB names LOG (and LOG.old.*) anywhere under `path`: there must be none. A LOG file
// shares the data folder's disk, and RocksDB 7 asserts when it writes again to one whose write
// failed (storage/rocksdb_logger.h): its log goes to the daemon's.
std::vector<std::string> RocksdbLogFiles(const std::string& path) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.path().filename().string().starts_with("LOG")) found.push_back(entry.path());
  }
  return found;
}

// A daemon whose data folder is on an 8 MiB tmpfs, and the means to fill it.
class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root; CI runs as root";
    std::filesystem::create_directories(mount_point_);
    tmpfs_.emplace(mount_point_, 8);
    if (!tmpfs_->error().empty()) GTEST_SKIP() << "cannot mount a tmpfs here: " << tmpfs_->error();
  }

  DaemonProcess Start() {
    auto daemon = DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", data_, "--threads",
                                        "2", "--backup-dir", dir_.Join("backups")});
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  static HttpResponse Train(HttpClient& client, std::uint64_t n) {
    return client.Send(
        http::verb::post,
        "/train?label=" + std::string(n % 2 ? "spam" : "ham") + "&id=m" + std::to_string(n),
        MessageText(n));
  }

  // Trains messages n, n+1, ... until one is refused: returns that answer, with the acknowledged
  // ones in `acknowledged` and `n` past the refused one.
  static HttpResponse FillTheDisk(HttpClient& client, std::uint64_t& n,
                                  std::vector<std::uint64_t>& acknowledged) {
    for (const std::uint64_t end = n + 100000; n < end; ++n) {
      HttpResponse response = Train(client, n);
      if (response.result() != http::status::ok) {
        ++n;
        return response;
      }
      acknowledged.push_back(n);
    }
    throw std::runtime_error("100000 trains and the disk is not full");
  }

  // The ids of the ledger of the daemon on `port`.
  static std::set<std::string> LedgerIds(int port) {
    HttpClient reader(port);
    const json::value listed = reader.GetJson("/admin/learned?source=&limit=10000");
    std::set<std::string> ids;
    for (const json::value& message : listed.at("messages").as_array()) {
      ids.insert(std::string(message.at("id").as_string()));
    }
    return ids;
  }

  TempDir dir_;
  const std::string mount_point_ = dir_.Join("small");
  const std::string data_ = mount_point_ + "/model";
  std::optional<Tmpfs> tmpfs_;
};

TEST_F(DiskFullTest, TrainingPausesWithA507AndResumesWhenSpaceReturns) {
  const std::string& data = data_;
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const auto train = [&](std::uint64_t n) { return Train(client, n); };

  // Fill the disk.
  std::vector<std::uint64_t> acknowledged;
  std::uint64_t n = 0;
  HttpResponse full;
  try {
    full = FillTheDisk(client, n, acknowledged);
  } catch (const std::exception& e) {
    FAIL() << "train " << n << ": " << e.what() << "\n" << daemon.Log();
  }
  --n;  // The refused one; the loops below go on from it.
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
  ASSERT_TRUE(tmpfs_->Resize(64));
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
  EXPECT_EQ(RocksdbLogFiles(data), std::vector<std::string>{});
  DaemonProcess again = Start();
  const std::set<std::string> ids = LedgerIds(again.port());
  for (std::uint64_t a : acknowledged) {
    EXPECT_TRUE(ids.contains("m" + std::to_string(a))) << "acknowledged train m" << a << " lost";
  }
  std::printf("[ disk full ] %zu acknowledged trains, %zu in the ledger after restart, lost 0\n",
              acknowledged.size(), ids.size());
}

// Stopped while the disk is still full, after long enough for RocksDB's periodic work to have
// met the full disk (its log is flushed every 10 s): a clean exit. (RocksDB's own LOG file in the
// history folder once failed there, and RocksDB aborted.) Started again on the full disk: it
// classifies, without a scan history, which opens by itself once space returns, as training
// resumes. The scans only in memory when the disk filled are lost: the history could not write
// them.
TEST_F(DiskFullTest, StoppedAndStartedWhileTheDiskIsFullItExitsCleanlyAndRecovers) {
  std::vector<std::uint64_t> acknowledged;
  std::uint64_t n = 0;
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    for (; n < 2; ++n) {
      ASSERT_EQ(Train(client, n).result(), http::status::ok);
      acknowledged.push_back(n);
    }
    for (int k = 0; k < 5; ++k) {
      ASSERT_EQ(client.Send(http::verb::post, "/classify", MessageText(k)).result(),
                http::status::ok);
    }
    const HttpResponse full = FillTheDisk(client, n, acknowledged);
    ASSERT_EQ(full.result(), http::status::insufficient_storage) << full.body();
    const auto filled = std::chrono::steady_clock::now();
    // Scans to write while the disk is full: the history's writes fail and are counted.
    for (int k = 0; k < 50; ++k) {
      ASSERT_EQ(client.Send(http::verb::post, "/classify", MessageText(1000 + k)).result(),
                http::status::ok);
    }
    std::this_thread::sleep_until(filled + std::chrono::seconds(11));
    try {
      ASSERT_EQ(client.Send(http::verb::get, "/readyz").result(),
                http::status::service_unavailable);
    } catch (const std::exception& e) {
      FAIL() << "the daemon stopped answering on a full disk: " << e.what() << "\n" << daemon.Log();
    }
    ASSERT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  EXPECT_EQ(RocksdbLogFiles(data_), std::vector<std::string>{});

  // What the stop freed, filled again: the next start finds no byte free.
  const std::string filler = mount_point_ + "/filler";
  {
    std::ofstream out(filler, std::ios::binary);
    const std::string block(4096, '\0');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const HttpResponse unrecorded = client.Send(http::verb::post, "/classify", MessageText(3000));
  ASSERT_EQ(unrecorded.result(), http::status::ok) << unrecorded.body();
  EXPECT_FALSE(json::parse(unrecorded.body()).as_object().contains("scan_id"));
  EXPECT_NE(daemon.Log().find("the scan history is off until its folder opens"), std::string::npos)
      << daemon.Log();

  // Space returns: the history opens by itself, and training resumes.
  std::filesystem::remove(filler);
  ASSERT_TRUE(tmpfs_->Resize(64));
  const auto grown = std::chrono::steady_clock::now();
  std::string scan_id;
  while (scan_id.empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), grown + std::chrono::seconds(30))
        << "the scan history did not open\n"
        << daemon.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const json::object answer =
        json::parse(client.Send(http::verb::post, "/classify", MessageText(3001)).body())
            .as_object();
    if (answer.contains("scan_id")) scan_id = answer.at("scan_id").as_string();
  }
  const std::chrono::duration<double> opened = std::chrono::steady_clock::now() - grown;
  std::printf("[ disk full ] the scan history opened %.2f s after the tmpfs grew\n",
              opened.count());
  // Queued scans are found at once.
  const HttpResponse found = client.Send(http::verb::get, "/history/" + scan_id);
  EXPECT_EQ(found.result(), http::status::ok) << found.body();
  while (client.Send(http::verb::get, "/readyz").result() != http::status::ok) {
    ASSERT_LT(std::chrono::steady_clock::now(), grown + std::chrono::seconds(30))
        << "training did not resume\n"
        << daemon.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(Train(client, n).result(), http::status::ok);
  acknowledged.push_back(n);

  // Nothing acknowledged lost; a clean stop and a consistent folder.
  const std::set<std::string> ids = LedgerIds(daemon.port());
  for (std::uint64_t a : acknowledged) {
    EXPECT_TRUE(ids.contains("m" + std::to_string(a))) << "acknowledged train m" << a << " lost";
  }
  ASSERT_EQ(daemon.Terminate(), 0) << daemon.Log();
  const ProcessExit check = RunToExit({"check", "--data-dir", data_});
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_EQ(RocksdbLogFiles(data_), std::vector<std::string>{});
}

}  // namespace
}  // namespace nbspamd::testing
