// Dump and restore through the real daemon: GET /admin/dump while it serves, `nbspamd dump` and
// `nbspamd restore` on its data folder, and the restored model served again.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr char kDumpSecret[] = "dump-test-secret-1";
const std::vector<std::string> kDumpProbes = {
    "Subject: cheap pills\n\ncheap pills now, click here",
    "Subject: agenda\n\nthe meeting agenda for friday, review the notes",
    "Subject: prize\n\nyou won a prize, send your account password"};

using test_support::ReadFile;

class DumpRestoreTest : public ::testing::Test {
 protected:
  DaemonProcess Start(const std::string& data, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--listen",      "127.0.0.1:0",
                                     "--data-dir",    data,
                                     "--threads",     "2",
                                     "--backup-dir",  dir_.Join("bk"),
                                     "--auth-tokens", std::string("admin:") + kDumpSecret};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  static HttpResponse Admin(HttpClient& client, http::verb verb, const std::string& target,
                            const std::string& body = "") {
    return client.Send(verb, target, body, "text/plain",
                       {{"Authorization", std::string("Bearer ") + kDumpSecret}});
  }

  static void Train(HttpClient& client, const std::string& target, const std::string& body) {
    const HttpResponse response = Admin(client, http::verb::post, target, body);
    ASSERT_EQ(response.result(), http::status::ok) << response.body();
  }

  // /stats and the scores of the probes (with alice's layer too): what must survive a restore.
  static std::string Fingerprint(HttpClient& client) {
    // A dump holds no ledger, so not what the recent feedback gives.
    std::string text = WithoutFeedback(json::serialize(client.GetJson("/stats")));
    for (const std::string& probe : kDumpProbes) {
      for (const std::string& user : {std::string(), std::string("&user=alice")}) {
        const json::value answer = client.PostJson("/classify?explain=0" + user, probe);
        text += "\n" + json::serialize(answer.at("score")) + " " +
                json::serialize(answer.at("verdict"));
      }
    }
    return text;
  }

  TempDir dir_;
};

TEST_F(DumpRestoreTest, ADumpRestoredGivesTheSameStatsAndScores) {
  const std::string original = dir_.Join("original");
  std::string served_dump;
  std::string fingerprint;
  {
    DaemonProcess daemon = Start(original);
    HttpClient client(daemon.port());
    Train(client, "/train?label=spam&id=s1", kDumpProbes[0]);
    Train(client, "/train?label=spam&id=s2", "Subject: win\n\nwin money now, click");
    Train(client, "/train?label=ham&id=h1", kDumpProbes[1]);
    Train(client, "/train?label=ham&id=h2", "Subject: lunch\n\nlunch on friday with the team");
    Train(client, "/train?label=ham&id=u1&user=alice", kDumpProbes[2]);
    fingerprint = Fingerprint(client);

    // Without the token: refused.
    EXPECT_EQ(client.Send(http::verb::get, "/admin/dump").result(), http::status::unauthorized);
    const HttpResponse dumped = Admin(client, http::verb::get, "/admin/dump");
    ASSERT_EQ(dumped.result(), http::status::ok) << dumped.body();
    EXPECT_EQ(dumped[http::field::content_type], "text/plain; charset=utf-8");
    EXPECT_NE(dumped[http::field::content_disposition].find("attachment"), std::string::npos);
    EXPECT_TRUE(dumped.find("X-Nbspamd-Body-File") == dumped.end());
    served_dump = dumped.body();
    EXPECT_TRUE(served_dump.starts_with("nbspamd-dump 1\n")) << served_dump.substr(0, 100);
    EXPECT_NE(served_dump.find("\nlayer user alice\n"), std::string::npos);
    // The file it was sent from is gone.
    for (const auto& entry : std::filesystem::directory_iterator(dir_.Join("bk"))) {
      ADD_FAILURE() << "left behind: " << entry.path();
    }
    // A restore into the folder the daemon serves is refused, and changes nothing.
    std::ofstream(dir_.Join("served.dump")) << served_dump;
    const ProcessExit busy =
        RunToExit({"restore", "--data-dir", original, dir_.Join("served.dump")});
    EXPECT_EQ(busy.status, 1) << busy.output;
    EXPECT_NE(busy.output.find("lock"), std::string::npos) << busy.output;
    EXPECT_EQ(Fingerprint(client), fingerprint);
    daemon.Terminate();
  }
  // Offline, the same model gives the same dump.
  const ProcessExit offline =
      RunToExit({"dump", "--data-dir", original, "--output", dir_.Join("offline.dump")});
  ASSERT_EQ(offline.status, 0) << offline.output;
  EXPECT_EQ(ReadFile(dir_.Join("offline.dump")), served_dump);

  const std::string copy = dir_.Join("copy");
  const ProcessExit restored =
      RunToExit({"restore", "--data-dir", copy, dir_.Join("offline.dump")});
  ASSERT_EQ(restored.status, 0) << restored.output;
  EXPECT_NE(restored.output.find("restored (replace): 2 layers"), std::string::npos)
      << restored.output;
  const ProcessExit check = RunToExit({"check", "--data-dir", copy});
  EXPECT_EQ(check.status, 0) << check.output;
  {
    DaemonProcess daemon = Start(copy);
    HttpClient client(daemon.port());
    EXPECT_EQ(Fingerprint(client), fingerprint);
    // Restored counts are base counts: the ids learned before are unknown here.
    const HttpResponse forget = Admin(client, http::verb::post, "/forget?id=s1", "");
    EXPECT_EQ(forget.result(), http::status::not_found) << forget.body();
    EXPECT_EQ(Fingerprint(client), fingerprint);
    daemon.Terminate();
  }
  const ProcessExit again =
      RunToExit({"dump", "--data-dir", copy, "--output", dir_.Join("again.dump")});
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(ReadFile(dir_.Join("again.dump")), served_dump);
}

TEST_F(DumpRestoreTest, TheCommandsRefuseWhatTheyCannotDoWithAClearMessage) {
  const std::string data = dir_.Join("model");
  {
    DaemonProcess daemon = Start(data);
    HttpClient client(daemon.port());
    Train(client, "/train?label=spam&id=s1", kDumpProbes[0]);
    daemon.Terminate();
  }
  const ProcessExit dumped =
      RunToExit({"dump", "--data-dir", data, "--output", dir_.Join("model.dump")});
  ASSERT_EQ(dumped.status, 0) << dumped.output;

  // Other tokenizer settings: other token hashes.
  const ProcessExit bigrams = RunToExit(
      {"restore", "--data-dir", dir_.Join("b"), "--word-bigrams", "true", dir_.Join("model.dump")});
  EXPECT_EQ(bigrams.status, 1) << bigrams.output;
  EXPECT_NE(bigrams.output.find("word_bigrams is 0 in the dump and 1 here"), std::string::npos)
      << bigrams.output;
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("b")));

  // Not a dump; a missing file; a bad mode; no file.
  std::ofstream(dir_.Join("mail.eml")) << kDumpProbes[0];
  const ProcessExit mail = RunToExit({"restore", "--data-dir", data, dir_.Join("mail.eml")});
  EXPECT_EQ(mail.status, 1);
  EXPECT_NE(mail.output.find("not an nbspamd dump"), std::string::npos) << mail.output;
  const ProcessExit missing = RunToExit({"restore", "--data-dir", data, dir_.Join("none")});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("cannot read"), std::string::npos) << missing.output;
  const ProcessExit mode =
      RunToExit({"restore", "--mode", "merge", "--data-dir", data, dir_.Join("model.dump")});
  EXPECT_EQ(mode.status, 2) << mode.output;
  const ProcessExit none = RunToExit({"restore", "--data-dir", data});
  EXPECT_EQ(none.status, 2) << none.output;
  // A dump of a folder with no model.
  const ProcessExit empty = RunToExit({"dump", "--data-dir", dir_.Join("nothing")});
  EXPECT_EQ(empty.status, 1);
  EXPECT_NE(empty.output.find("no model"), std::string::npos) << empty.output;

  // Append twice, subtract once: the model holds its own training and one copy.
  ASSERT_EQ(RunToExit({"restore", "--mode", "append", "--data-dir", data, dir_.Join("model.dump")})
                .status,
            0);
  ASSERT_EQ(RunToExit({"restore", "--mode", "append", "--data-dir", data, dir_.Join("model.dump")})
                .status,
            0);
  const ProcessExit subtract =
      RunToExit({"restore", "--mode", "subtract", "--data-dir", data, dir_.Join("model.dump")});
  ASSERT_EQ(subtract.status, 0) << subtract.output;
  EXPECT_NE(subtract.output.find("0 counts were not subtracted"), std::string::npos)
      << subtract.output;
  const ProcessExit check = RunToExit({"check", "--data-dir", data});
  EXPECT_EQ(check.status, 0) << check.output;
  DaemonProcess daemon = Start(data);
  HttpClient client(daemon.port());
  EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 2);
  // The daemon's own message can still be forgotten: one document, the appended copy, stays.
  const HttpResponse forget = Admin(client, http::verb::post, "/forget?id=s1", "");
  EXPECT_EQ(forget.result(), http::status::ok) << forget.body();
  EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 1);
}

}  // namespace
}  // namespace nbspamd::testing
