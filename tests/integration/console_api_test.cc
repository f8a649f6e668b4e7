// What the console reads beyond the rest of the API, through the real daemon: its files at /ui/
// (compiled in, with a strict Content-Security-Policy), GET /activity (the last hour, minute by
// minute, from every front end) and GET /calibration (the held-out histogram and fitted curve).
// The page itself is tested in a real browser (tests/browser/console_test.py).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/seed_examples.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

class ConsoleApiTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    return StartTestDaemon(data_.Join("model"), extra);
  }
  TempDir data_;
};

TEST_F(ConsoleApiTest, TheFilesAreServedWithAStrictPolicy) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const auto page = client.Send(http::verb::get, "/ui/", "");
  EXPECT_EQ(page.result(), http::status::ok);
  EXPECT_EQ(page[http::field::content_type], "text/html; charset=utf-8");
  const std::string policy(page["Content-Security-Policy"]);
  EXPECT_NE(policy.find("script-src 'self'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe"), std::string::npos) << policy;
  EXPECT_EQ(page["X-Content-Type-Options"], "nosniff");
  EXPECT_NE(page.body().find("<script src=\"app.js\" defer></script>"), std::string::npos);

  const auto script = client.Send(http::verb::get, "/ui/app.js", "");
  EXPECT_EQ(script.result(), http::status::ok);
  EXPECT_EQ(script[http::field::content_type], "text/javascript; charset=utf-8");
  EXPECT_EQ(client.Send(http::verb::get, "/ui/style.css", "")[http::field::content_type],
            "text/css; charset=utf-8");

  const auto bare = client.Send(http::verb::get, "/ui", "");
  EXPECT_EQ(bare.result(), http::status::moved_permanently);
  EXPECT_EQ(bare[http::field::location], "/ui/");
  const auto missing = client.Send(http::verb::get, "/ui/../stats", "");
  EXPECT_EQ(missing.result(), http::status::not_found) << missing.body();
  EXPECT_EQ(client.Send(http::verb::get, "/ui/app.js?x=1", "").result(), http::status::bad_request);
  EXPECT_EQ(client.Send(http::verb::post, "/ui/", "").result(), http::status::method_not_allowed);
}

TEST_F(ConsoleApiTest, ActivityCountsThisMinutesClassificationsAndTrainings) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeedExamples(client);
  for (const char* text : {"buy cheap pills now", "meeting notes attached", "hello"}) {
    EXPECT_EQ(client.Send(http::verb::post, "/classify", text).result(), http::status::ok);
  }
  const json::value activity = client.GetJson("/activity");
  const json::array& minutes = activity.at("minutes").as_array();
  ASSERT_EQ(minutes.size(), 60u);
  // The last two minutes hold everything (the test may cross a minute's end).
  std::int64_t classified = 0, trained = 0;
  for (std::size_t i = 58; i < 60; ++i) {
    const json::object& minute = minutes[i].as_object();
    for (const char* verdict : {"spam", "ham", "unsure", "unscored"}) {
      classified += minute.at(verdict).to_number<std::int64_t>();
    }
    trained += minute.at("trained").to_number<std::int64_t>();
  }
  EXPECT_EQ(classified, 3);
  EXPECT_EQ(trained, static_cast<std::int64_t>(SeedExamples().size()));
  EXPECT_GT(minutes[59].at("start_ms").as_int64(), minutes[0].at("start_ms").as_int64());
  EXPECT_FALSE(activity.as_object().contains("cluster"));
}

TEST_F(ConsoleApiTest, CalibrationGivesTheHistogramAndTheFittedCurve) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeedExamples(client);
  const json::value calibration = client.GetJson("/calibration");
  EXPECT_FALSE(calibration.at("ready").as_bool());  // Fewer than 20 of each class.
  const json::array& bins = calibration.at("bins").as_array();
  ASSERT_EQ(bins.size(), 100u);
  EXPECT_DOUBLE_EQ(bins[0].at("low").to_number<double>(), -2.0);
  EXPECT_DOUBLE_EQ(bins[99].at("high").to_number<double>(), 2.0);
  std::int64_t spam = 0, ham = 0;
  for (const json::value& bin : bins) {
    spam += bin.at("spam").to_number<std::int64_t>();
    ham += bin.at("ham").to_number<std::int64_t>();
    const double fitted = bin.at("fitted").to_number<double>();
    EXPECT_GE(fitted, 0.0);
    EXPECT_LE(fitted, 1.0);
  }
  EXPECT_EQ(spam, calibration.at("spam").to_number<std::int64_t>());
  EXPECT_EQ(ham, calibration.at("ham").to_number<std::int64_t>());
}

TEST_F(ConsoleApiTest, TheFilesAreOpenButTheDataFollowsAuthClassify) {
  DaemonProcess daemon =
      Start({"--auth-tokens", "admin:console-test-secret-1", "--auth-classify", "true"});
  HttpClient client(daemon.port());
  EXPECT_EQ(client.Send(http::verb::get, "/ui/", "").result(), http::status::ok);
  EXPECT_EQ(client.Send(http::verb::get, "/activity", "").result(), http::status::unauthorized);
  EXPECT_EQ(client.Send(http::verb::get, "/calibration", "").result(), http::status::unauthorized);
}

// GET /admin/learned (the Model page's "List what it trained"): newest first, the window's real
// total beside the page's count, and a cursor (`next`, given back as ?before=) through the rest.
TEST_F(ConsoleApiTest, LearnedIsNewestFirstWithATotalAndACursor) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const auto train = [&](const std::string& id) {
    const auto answer = client.Send(http::verb::post, "/train?label=spam&id=" + id,
                                    "Subject: offer " + id + "\r\n\r\ncheap offer " + id);
    ASSERT_EQ(answer.result(), http::status::ok) << answer.body();
  };
  for (int n = 0; n < 5; ++n) train("old" + std::to_string(n));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // A later learned_at second.
  for (int n = 0; n < 2; ++n) train("new" + std::to_string(n));

  std::vector<std::string> seen;
  std::string before;
  std::int64_t last_learned_at = std::numeric_limits<std::int64_t>::max();
  for (int page = 0; page < 3; ++page) {
    const json::value answer = client.GetJson("/admin/learned?source=&limit=3" +
                                              (before.empty() ? "" : "&before=" + before));
    ASSERT_TRUE(answer.as_object().contains("total")) << json::serialize(answer);
    EXPECT_EQ(answer.at("total").as_int64(), 7);
    const json::array& messages = answer.at("messages").as_array();
    EXPECT_EQ(answer.at("count").as_int64(), static_cast<std::int64_t>(messages.size()));
    EXPECT_EQ(messages.size(), page < 2 ? 3u : 1u);
    for (const json::value& message : messages) {
      const std::int64_t learned_at = message.at("learned_at").as_int64();
      EXPECT_LE(learned_at, last_learned_at);  // Newest first.
      last_learned_at = learned_at;
      seen.emplace_back(message.at("id").as_string());
    }
    if (page < 2) {
      ASSERT_TRUE(answer.as_object().contains("next")) << json::serialize(answer);
      before = std::string(answer.at("next").as_string());  // "LEARNED_AT:ID": no escaping here.
    } else {
      EXPECT_FALSE(answer.as_object().contains("next"));
    }
  }
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen[0], "new1");
  EXPECT_EQ(seen[1], "new0");
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 7u);  // Each once.

  const auto bad = client.Send(http::verb::get, "/admin/learned?source=&before=nonsense", "");
  EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
}

// Sums `key` over the rows of GET /activity?range=`range`.
std::int64_t ActivitySum(HttpClient& client, const std::string& range, const char* key) {
  std::int64_t sum = 0;
  const json::value activity = client.GetJson("/activity?range=" + range);
  for (const json::value& row : activity.at("rows").as_array()) {
    sum += row.at(key).to_number<std::int64_t>();
  }
  return sum;
}

TEST_F(ConsoleApiTest, TheDayAndTheMonthOutliveARestartAndRejectedTrainingsAreNotFailures) {
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    TrainSeedExamples(client);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(client.Send(http::verb::post, "/classify", "buy cheap pills now").result(),
                http::status::ok);
    }
    // Malformed trainings are the caller's errors: rejected, not failed.
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(client.Send(http::verb::post, "/forget?id=never-learned", "").result(),
                http::status::not_found);
    }
    const json::value day = client.GetJson("/activity?range=day");
    EXPECT_EQ(day.at("range"), "day");
    EXPECT_EQ(day.at("step_seconds"), 300);
    EXPECT_EQ(day.at("rows").as_array().size(), 288u);
    EXPECT_FALSE(day.as_object().contains("minutes"));
    EXPECT_EQ(client.GetJson("/activity?range=month").at("rows").as_array().size(), 720u);
    EXPECT_EQ(ActivitySum(client, "day", "train_rejected"), 3);
    EXPECT_EQ(ActivitySum(client, "day", "train_failed"), 0);
    const auto bad = client.Send(http::verb::get, "/activity?range=year", "");
    EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  DaemonProcess again = Start();
  HttpClient client(again.port());
  for (const char* range : {"hour", "day", "month"}) {
    std::int64_t classified = 0;
    for (const char* verdict : {"spam", "ham", "unsure", "unscored"}) {
      classified += ActivitySum(client, range, verdict);
    }
    EXPECT_EQ(classified, 4) << range;
    EXPECT_EQ(ActivitySum(client, range, "trained"),
              static_cast<std::int64_t>(SeedExamples().size()))
        << range;
    EXPECT_EQ(ActivitySum(client, range, "train_rejected"), 3) << range;
  }
}

TEST_F(ConsoleApiTest, HealthSaysWhatRunsAndSinceWhen) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const json::object running = client.GetJson("/healthz").as_object();
  EXPECT_EQ(running.at("status"), "ok");
  EXPECT_FALSE(running.at("version").as_string().empty());
  EXPECT_FALSE(running.at("build_type").as_string().empty());
  EXPECT_FALSE(running.at("compiler").as_string().empty());
  EXPECT_TRUE(running.at("commit").is_string());
  EXPECT_LE(running.at("started_ms").as_int64(), before);
  EXPECT_GT(running.at("started_ms").as_int64(), before - 60'000);
  EXPECT_GE(running.at("uptime_seconds").as_int64(), 0);
  EXPECT_LT(running.at("uptime_seconds").as_int64(), 60);
}

}  // namespace
}  // namespace nbspamd::testing
