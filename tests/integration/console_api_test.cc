// What the console reads beyond the rest of the API, through the real daemon: its files at /ui/
// (compiled in, with a strict Content-Security-Policy), GET /activity (the last hour, minute by
// minute, from every front end) and GET /calibration (the held-out histogram and fitted curve).
// The page itself is tested in a real browser (tests/browser/console_test.py).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
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

}  // namespace
}  // namespace nbspamd::testing
