// Reloading the settings without a restart (server/settings_reload.h, docs/CONFIG.md
// "Reloading"): SIGHUP and POST /admin/reload read the configuration file again and apply the
// keys that change live; a bad file changes nothing and says why; SIGHUP never ends the daemon.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

double StatsValue(HttpClient& client, const char* key) {
  return json::parse(client.Send(http::verb::get, "/stats").body()).at(key).to_number<double>();
}

// Waits until `condition` holds, at most 10 s.
template <class Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(ReloadTest, SighupAppliesTheThresholdsAndABadFileChangesNothing) {
  TempDir dir;
  const std::string config = dir.Join("nbspamd.toml");
  WriteFile(config, "spam_threshold = 1.0\nham_threshold = -0.6\n");
  DaemonProcess daemon = StartTestDaemon(dir.Join("model"), {"--config", config});
  HttpClient client(daemon.port());
  ASSERT_EQ(StatsValue(client, "spam_threshold"), 1.0);

  // A connection open across the reload is served after it.
  RawConnection open(daemon.port());
  WriteFile(config, "spam_threshold = 0.5\nham_threshold = -0.2\n");
  ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return StatsValue(client, "spam_threshold") == 0.5; }))
      << daemon.Log();
  EXPECT_EQ(StatsValue(client, "ham_threshold"), -0.2);
  EXPECT_TRUE(Eventually([&] {
    return daemon.Log().find("applied spam_threshold, ham_threshold") != std::string::npos;
  })) << daemon.Log();
  open.Write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(open.ReadUntilClosed(std::chrono::seconds(5)).starts_with("HTTP/1.1 200"));

  // A file that does not load: the running settings stay, and the log says what is wrong.
  WriteFile(config, "spam_threshold = 0.1\nham_threshold = 0.9\n");
  ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return daemon.Log().find("settings not reloaded, the running ones stay") != std::string::npos;
  })) << daemon.Log();
  EXPECT_EQ(StatsValue(client, "spam_threshold"), 0.5);
  EXPECT_EQ(StatsValue(client, "ham_threshold"), -0.2);

  // Several SIGHUPs (logrotate, a closed terminal) never end the daemon, nor do the signals whose
  // default action would: only SIGTERM and SIGINT do.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  for (const int signal : {SIGUSR1, SIGUSR2, SIGPIPE}) ASSERT_EQ(kill(daemon.pid(), signal), 0);
  EXPECT_TRUE(Eventually([&] {
    return daemon.Log().find("signal " + std::to_string(SIGUSR2) + " ignored") != std::string::npos;
  })) << daemon.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

// The signals the thread blocks, from its status (/proc/PID/task/TID/status); nullopt when the
// thread has ended.
std::optional<std::uint64_t> BlockedSignals(const std::filesystem::path& task) {
  std::ifstream status(task / "status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigBlk:")) return std::stoull(line.substr(7), nullptr, 16);
  }
  return std::nullopt;
}

bool Blocks(std::uint64_t blocked, int signal) { return ((blocked >> (signal - 1)) & 1) != 0; }

// A signal sent to the process goes to one thread that does not block it. Only the HTTP I/O
// threads take the daemon's signals; every other thread (the training writer, RocksDB's, the
// scan history's, the milter's and spamd's) blocks them, so a signal is never left pending on a
// thread that is busy or asleep elsewhere.
TEST(ReloadTest, OnlyTheIoThreadsTakeSignals) {
  TempDir dir;
  DaemonProcess daemon = StartTestDaemon(
      dir.Join("model"),
      {"--threads", "3", "--milter-listen", "inet:127.0.0.1:0", "--spamd-listen", "127.0.0.1:0"});
  HttpClient client(daemon.port());
  ASSERT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
  ASSERT_TRUE(daemon.LoggedPort("spamd listening on 127.0.0.1:").has_value()) << daemon.Log();
  const std::filesystem::path tasks = "/proc/" + std::to_string(daemon.pid()) + "/task";
  // The threads, and those that take the signals (the I/O threads once each has started).
  const auto count = [&] {
    std::pair<int, int> counted{0, 0};
    for (const auto& task : std::filesystem::directory_iterator(tasks)) {
      const std::optional<std::uint64_t> blocked = BlockedSignals(task.path());
      if (!blocked) continue;
      ++counted.first;
      const bool blocks = Blocks(*blocked, SIGUSR1);
      for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGUSR2, SIGPIPE}) {
        EXPECT_EQ(Blocks(*blocked, signal), blocks) << task.path() << " " << signal;
      }
      if (!blocks) ++counted.second;
    }
    return counted;
  };
  std::pair<int, int> counted;
  EXPECT_TRUE(Eventually([&] {
    counted = count();
    return counted.second >= 3;
  }));
  EXPECT_GT(counted.first, 6);  // The I/O threads, the training writer, RocksDB's, the front ends'.
  EXPECT_EQ(counted.second, 3);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

TEST(ReloadTest, AdminReloadAnswersWhatChangedAndWhatNeedsARestart) {
  TempDir dir;
  const std::string config = dir.Join("nbspamd.toml");
  WriteFile(config, "train_rate_limit = 0\n");
  DaemonProcess daemon = StartTestDaemon(
      dir.Join("model"), {"--config", config, "--auth-tokens", "admin:s3cret-token-for-reload"});
  HttpClient client(daemon.port());
  const auto reload = [&] {
    return client.Send(http::verb::post, "/admin/reload", "", "text/plain",
                       {{"Authorization", "Bearer s3cret-token-for-reload"}});
  };
  // A token is needed, as for every /admin endpoint.
  EXPECT_EQ(client.Send(http::verb::post, "/admin/reload").result(), http::status::unauthorized);

  const auto unchanged = reload();
  ASSERT_EQ(unchanged.result(), http::status::ok) << unchanged.body();
  EXPECT_EQ(json::parse(unchanged.body()),
            json::parse(R"({"applied":[],"restart_needed":[],"live":{}})"));

  // train_rate_limit changes live: the second train of the same second is refused.
  WriteFile(config, "train_rate_limit = 1\nlog_level = \"warning\"\nmax_body_bytes = 2000000\n");
  const auto changed = reload();
  ASSERT_EQ(changed.result(), http::status::ok) << changed.body();
  EXPECT_EQ(json::parse(changed.body()), json::parse(R"({"applied":["train_rate_limit","log_level"],
                            "restart_needed":["max_body_bytes"],"live":{}})"))
      << changed.body();
  int refused = 0;
  for (int i = 0; i < 3; ++i) {
    const auto trained =
        client.Send(http::verb::post, "/train?label=spam&id=m" + std::to_string(i), "cheap pills",
                    "text/plain", {{"Authorization", "Bearer s3cret-token-for-reload"}});
    if (trained.result() == http::status::too_many_requests) ++refused;
  }
  EXPECT_GE(refused, 1);

  WriteFile(config, "spam_threshold = 0.1\nham_threshold = 0.9\n");
  const auto bad = reload();
  EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
  EXPECT_NE(bad.body().find("ham_threshold (0.9) must not be greater than spam_threshold"),
            std::string::npos)
      << bad.body();
}

http::status Train(HttpClient& client, const std::string& token, const std::string& id) {
  return client
      .Send(http::verb::post, "/train?label=spam&id=" + id, "cheap pills now", "text/plain",
            {{"Authorization", "Bearer " + token}})
      .result();
}

TEST(ReloadTest, TokensChangeLiveWithTheirFileAndABadFileKeepsTheRunningOnes) {
  TempDir dir;
  const std::string tokens = dir.Join("tokens");
  WriteFile(tokens, "admin:admin-secret-0123456789\n");
  DaemonProcess daemon =
      StartTestDaemon(dir.Join("model"), {"--auth-tokens-file", tokens, "--train-rate-limit", "0"});
  HttpClient client(daemon.port());
  const auto reload = [&](const std::string& token) {
    return client.Send(http::verb::post, "/admin/reload", "", "text/plain",
                       {{"Authorization", "Bearer " + token}});
  };
  EXPECT_EQ(Train(client, "admin-secret-0123456789", "a1"), http::status::ok);
  EXPECT_EQ(Train(client, "ops-secret-0123456789ab", "o1"), http::status::forbidden);

  // The same settings, the file's contents changed: the new token works, the removed one not.
  WriteFile(tokens, "ops:ops-secret-0123456789ab\n");
  const auto changed = reload("admin-secret-0123456789");
  ASSERT_EQ(changed.result(), http::status::ok) << changed.body();
  EXPECT_EQ(json::parse(changed.body()).at("applied"), json::parse(R"(["auth_tokens_file"])"))
      << changed.body();
  EXPECT_EQ(Train(client, "ops-secret-0123456789ab", "o2"), http::status::ok);
  EXPECT_EQ(Train(client, "admin-secret-0123456789", "a2"), http::status::forbidden);

  // A file that does not load: the running tokens stay and the answer says what is wrong.
  WriteFile(tokens, "ops:short\n");
  const auto bad = reload("ops-secret-0123456789ab");
  EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
  EXPECT_NE(bad.body().find(tokens), std::string::npos) << bad.body();
  EXPECT_EQ(Train(client, "ops-secret-0123456789ab", "o3"), http::status::ok);

  WriteFile(tokens, "ops:ops-secret-0123456789ab\n");
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();

  // auth_classify turns on live, from the config file (flags stay as they were at start).
  const std::string config = dir.Join("nbspamd.toml");

  WriteFile(config, "auth_classify = false\n");
  DaemonProcess again =
      StartTestDaemon(dir.Join("model"), {"--config", config, "--auth-tokens-file", tokens});
  HttpClient second(again.port());
  EXPECT_EQ(second.Send(http::verb::post, "/classify", "hello").result(), http::status::ok);
  WriteFile(config, "auth_classify = true\n");
  ASSERT_EQ(kill(again.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return second.Send(http::verb::post, "/classify", "hello").result() ==
           http::status::unauthorized;
  })) << again.Log();
  EXPECT_EQ(second
                .Send(http::verb::post, "/classify", "hello", "text/plain",
                      {{"Authorization", "Bearer ops-secret-0123456789ab"}})
                .result(),
            http::status::ok);
  EXPECT_EQ(again.Terminate(), 0) << again.Log();
}

TEST(ReloadTest, AutolearnTurnsOnAndOffLive) {
  TempDir dir;
  const std::string config = dir.Join("nbspamd.toml");
  WriteFile(config, "autolearn = false\n");
  DaemonProcess daemon = StartTestDaemon(dir.Join("model"), {"--config", config});
  HttpClient client(daemon.port());
  const auto metrics = [&] { return client.Send(http::verb::get, "/metrics").body(); };
  EXPECT_EQ(metrics().find("nbspamd_autolearn_total"), std::string::npos);

  WriteFile(config, "autolearn = true\nautolearn_spam_confidence = 0.95\n");
  const auto on = client.Send(http::verb::post, "/admin/reload");
  ASSERT_EQ(on.result(), http::status::ok) << on.body();
  EXPECT_EQ(json::parse(on.body()).at("applied"),
            json::parse(R"(["autolearn","autolearn_spam_confidence"])"))
      << on.body();
  EXPECT_NE(metrics().find("nbspamd_autolearn_total"), std::string::npos);

  WriteFile(config, "autolearn = false\n");
  ASSERT_EQ(client.Send(http::verb::post, "/admin/reload").result(), http::status::ok);
  EXPECT_EQ(metrics().find("nbspamd_autolearn_total"), std::string::npos);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

TEST(ReloadTest, APairSetLiveIsKeptInTheDataFolderUntilUnset) {
  TempDir dir;
  const std::string model = dir.Join("model");
  DaemonProcess daemon = StartTestDaemon(model);
  HttpClient client(daemon.port());
  const auto reload = [&](const std::string& body) {
    return client.Send(http::verb::post, "/admin/reload", body, "application/json");
  };
  const auto set = reload(R"({"set":{"spam_threshold":0.7,"ham_threshold":-0.3}})");
  ASSERT_EQ(set.result(), http::status::ok) << set.body();
  EXPECT_EQ(json::parse(set.body()),
            json::parse(R"({"applied":["spam_threshold","ham_threshold"],"restart_needed":[],
                            "live":{"ham_threshold":"-0.3","spam_threshold":"0.7"}})"))
      << set.body();
  EXPECT_EQ(StatsValue(client, "spam_threshold"), 0.7);
  EXPECT_EQ(StatsValue(client, "ham_threshold"), -0.3);

  // Refused, with nothing changed: a key that cannot be set live, a value that is not valid for
  // its key, a pair out of order, a body that is not the shape.
  for (const char* body : {R"({"set":{"max_body_bytes":1}})", R"({"set":{"spam_threshold":"x"}})",
                           R"({"set":{"ham_threshold":0.9}})", R"({"set":[1]})", R"([1])",
                           R"({"unset":["spam_threshold"],"set":{"spam_threshold":1}})"}) {
    const auto refused = reload(body);
    EXPECT_EQ(refused.result(), http::status::bad_request) << body << " " << refused.body();
    EXPECT_EQ(json::parse(refused.body()).at("error").at("code"), "invalid_argument") << body;
  }
  EXPECT_EQ(StatsValue(client, "spam_threshold"), 0.7);

  // They outlive a restart, and the log says they win.
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  DaemonProcess again = StartTestDaemon(model);
  HttpClient second(again.port());
  EXPECT_EQ(StatsValue(second, "spam_threshold"), 0.7);
  EXPECT_NE(again.Log().find("settings set live"), std::string::npos) << again.Log();

  // Unset: back to the defaults, and the file is gone.
  const auto unset =
      second.Send(http::verb::post, "/admin/reload",
                  R"({"unset":["spam_threshold","ham_threshold"]})", "application/json");
  ASSERT_EQ(unset.result(), http::status::ok) << unset.body();
  EXPECT_EQ(json::parse(unset.body()).at("live"), json::object());
  EXPECT_EQ(StatsValue(second, "spam_threshold"), 0.9);
  EXPECT_FALSE(std::ifstream(model + "/live-settings.toml").good());
  EXPECT_EQ(again.Terminate(), 0) << again.Log();
}

// The history's fact policies and its clear facts' bound change live: scans recorded after the
// reload keep their subject as the new policy says, those recorded before stay as they were.
TEST(ReloadTest, TheHistorysFactPoliciesChangeLiveForTheNextScans) {
  TempDir dir;
  const std::string config = dir.Join("nbspamd.toml");
  WriteFile(config, "history_keep_subject = \"keep\"\n");
  DaemonProcess daemon = StartTestDaemon(dir.Join("model"), {"--config", config});
  HttpClient client(daemon.port());
  ASSERT_EQ(client.Send(http::verb::post, "/train?label=spam", "cheap pills now").result(),
            http::status::ok);
  const auto subject_of = [&](const std::string& text) {
    const json::value classified = client.PostJson("/classify", text);
    const json::value scan =
        client.GetJson("/history/" + std::string(classified.at("scan_id").as_string()));
    return std::string(scan.at("facts").at("subject").as_string());
  };
  EXPECT_EQ(subject_of("Subject: Quarterly figures\r\n\r\nthe figures"), "Quarterly figures");
  EXPECT_EQ(client.GetJson("/history").at("history_facts").at("subject").as_string(), "keep");

  WriteFile(config,
            "history_keep_subject = \"hash\"\nhistory_keep_recipients = \"off\"\n"
            "history_clear_facts_days = 2\n");
  const auto reloaded = client.Send(http::verb::post, "/admin/reload");
  ASSERT_EQ(reloaded.result(), http::status::ok) << reloaded.body();
  EXPECT_EQ(json::parse(reloaded.body()).at("applied"),
            json::parse(R"(["history_keep_subject","history_keep_recipients",
                            "history_clear_facts_days"])"))
      << reloaded.body();
  EXPECT_TRUE(json::parse(reloaded.body()).at("restart_needed").as_array().empty());
  const std::string hashed = subject_of("Subject: Annual figures\r\n\r\nthe figures");
  EXPECT_EQ(hashed.size(), 17u) << hashed;
  EXPECT_EQ(hashed.front(), '#');
  const json::value page = client.GetJson("/history?q=figures");
  EXPECT_EQ(page.at("history_facts").at("subject").as_string(), "hash");
  EXPECT_EQ(page.at("history_facts").at("recipients").as_string(), "off");
  EXPECT_EQ(page.at("history_facts").at("clear_days").as_int64(), 2);
  // The scan recorded before keeps its clear subject, and the answer says why the other is missed.
  ASSERT_EQ(page.at("scans").as_array().size(), 1u) << page;
  EXPECT_EQ(page.at("scans").as_array()[0].at("facts").at("subject").as_string(),
            "Quarterly figures");
  EXPECT_NE(std::string(page.at("notice").as_string()).find("subjects are kept as hashes"),
            std::string::npos);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

}  // namespace
}  // namespace nbspamd::testing
