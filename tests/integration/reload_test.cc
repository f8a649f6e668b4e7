// Reloading the settings without a restart (server/settings_reload.h, docs/CONFIG.md
// "Reloading"): SIGHUP and POST /admin/reload read the configuration file again and apply the
// keys that change live; a bad file changes nothing and says why; SIGHUP never ends the daemon.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

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

  WriteFile(config, "spam_threshold = 0.5\nham_threshold = -0.2\n");
  ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return StatsValue(client, "spam_threshold") == 0.5; }))
      << daemon.Log();
  EXPECT_EQ(StatsValue(client, "ham_threshold"), -0.2);
  EXPECT_TRUE(Eventually([&] {
    return daemon.Log().find("applied spam_threshold, ham_threshold") != std::string::npos;
  })) << daemon.Log();

  // A file that does not load: the running settings stay, and the log says what is wrong.
  WriteFile(config, "spam_threshold = 0.1\nham_threshold = 0.9\n");
  ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return daemon.Log().find("settings not reloaded, the running ones stay") != std::string::npos;
  })) << daemon.Log();
  EXPECT_EQ(StatsValue(client, "spam_threshold"), 0.5);
  EXPECT_EQ(StatsValue(client, "ham_threshold"), -0.2);

  // Several SIGHUPs (logrotate, a closed terminal) never end the daemon.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(kill(daemon.pid(), SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
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
  EXPECT_EQ(json::parse(unchanged.body()), json::parse(R"({"applied":[],"restart_needed":[]})"));

  // train_rate_limit changes live: the second train of the same second is refused.
  WriteFile(config, "train_rate_limit = 1\nlog_level = \"warning\"\nmax_body_bytes = 2000000\n");
  const auto changed = reload();
  ASSERT_EQ(changed.result(), http::status::ok) << changed.body();
  EXPECT_EQ(json::parse(changed.body()), json::parse(R"({"applied":["train_rate_limit","log_level"],
                            "restart_needed":["max_body_bytes"]})"))
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

}  // namespace
}  // namespace nbspamd::testing
