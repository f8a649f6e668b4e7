// Verdict thresholds from feedback (`verdict_thresholds = feedback`) through the real daemon: once
// 1,000 held-out scores of each class are fed back they narrow the configured thresholds, every
// verdict follows the thresholds /stats shows, and a restart brings back the same thresholds.
#include <gtest/gtest.h>

#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/message_maker.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using test_support::Numbered;

constexpr int kPerClass = 1001;  // The first of each class has no held-out score.

DaemonProcess Start(const std::string& data_dir, const std::string& mode) {
  auto daemon = DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", data_dir,
                                      "--threads", "2", "--verdict-thresholds", mode});
  if (!daemon) throw std::runtime_error(daemon.error());
  return std::move(*daemon);
}

// The verdict of `score` under thresholds {spam, ham} (model/verdict.h).
std::string VerdictOf(double score, double spam, double ham) {
  return score > spam ? "spam" : score <= ham ? "ham" : "unsure";
}

struct Verdicts {
  int narrowed = 0;  // Probes unsure under 0.9 / -0.6 and decided under the thresholds in force.
  int widened = 0;   // Probes decided under 0.9 / -0.6 and another verdict in force.
};

// Classifies every probe and checks its verdict against the thresholds /stats gives.
Verdicts CheckVerdicts(HttpClient& client, const std::vector<std::string>& probes) {
  const json::value stats = client.GetJson("/stats");
  const double spam = stats.at("verdict_thresholds").at("spam").to_number<double>();
  const double ham = stats.at("verdict_thresholds").at("ham").to_number<double>();
  Verdicts verdicts;
  for (const std::string& probe : probes) {
    const json::value answer = client.PostJson("/classify", probe);
    const double score = answer.at("score").to_number<double>();
    const std::string verdict(answer.at("verdict").as_string());
    EXPECT_EQ(verdict, VerdictOf(score, spam, ham)) << "score " << score;
    const std::string fixed = VerdictOf(score, 0.9, -0.6);  // The defaults.
    if (fixed == "unsure" && verdict != "unsure") ++verdicts.narrowed;
    if (fixed != "unsure" && verdict != fixed) ++verdicts.widened;
  }
  return verdicts;
}

TEST(VerdictThresholdsTest, FeedbackNarrowsTheThresholdsVerdictsFollowAndARestartKeepsThem) {
  TempDir dir;
  const std::string data = dir.Join("model");
  MessageMaker maker(20261204);
  std::vector<std::string> probes;
  for (int i = 0; i < 300; ++i) probes.push_back(maker.Make(i % 2 == 0, /*own_tenths=*/3));
  json::value before;
  {
    DaemonProcess daemon = Start(data, "feedback");
    HttpClient client(daemon.port());
    for (int i = 0; i < kPerClass; ++i) {
      for (const bool spam : {true, false}) {
        const auto response =
            client.Send(http::verb::post,
                        std::string("/train?label=") + (spam ? "spam" : "ham") +
                            "&id=" + Numbered(spam ? "s" : "h", static_cast<std::uint64_t>(i)),
                        maker.Make(spam, /*own_tenths=*/8));
        ASSERT_EQ(response.result(), http::status::ok) << response.body();
      }
    }
    before = client.GetJson("/stats").at("verdict_thresholds");
    const json::value& feedback = before.at("feedback");
    EXPECT_EQ(before.at("mode"), "feedback");
    EXPECT_EQ(feedback.at("hams").to_number<int>(), 1000);
    EXPECT_EQ(feedback.at("spams").to_number<int>(), 1000);
    EXPECT_EQ(feedback.at("spam_from_feedback"), true);
    EXPECT_EQ(feedback.at("ham_from_feedback"), true);
    const double spam = before.at("spam").to_number<double>();
    const double ham = before.at("ham").to_number<double>();
    EXPECT_EQ(spam, feedback.at("spam").to_number<double>());
    EXPECT_EQ(ham, feedback.at("ham").to_number<double>());
    EXPECT_GE(spam, 0.25);
    EXPECT_LT(spam, 0.9) << "these hams score well below the configured threshold";
    EXPECT_GT(ham, -0.6) << "and these spams well above the other";
    EXPECT_LE(ham, spam);

    const std::string metrics = client.Send(http::verb::get, "/metrics").body();
    EXPECT_NE(metrics.find("nbspamd_verdict_threshold{kind=\"spam\"} "), std::string::npos)
        << metrics;

    const Verdicts verdicts = CheckVerdicts(client, probes);
    EXPECT_GT(verdicts.narrowed, 0) << "some ambiguous probes fall in the narrowed band";
    EXPECT_EQ(verdicts.widened, 0) << "the band only narrows";
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  {
    DaemonProcess restarted = Start(data, "feedback");
    HttpClient client(restarted.port());
    EXPECT_EQ(client.GetJson("/stats").at("verdict_thresholds"), before);
    EXPECT_EQ(restarted.Terminate(), 0) << restarted.Log();
  }
  // Fixed: the configured thresholds decide, and /stats still says what feedback would give.
  DaemonProcess fixed = Start(data, "fixed");
  HttpClient client(fixed.port());
  const json::value stats = client.GetJson("/stats").at("verdict_thresholds");
  EXPECT_EQ(stats.at("mode"), "fixed");
  EXPECT_EQ(stats.at("spam").to_number<double>(), 0.9);
  EXPECT_EQ(stats.at("ham").to_number<double>(), -0.6);
  EXPECT_EQ(stats.at("feedback"), before.at("feedback"));
  const Verdicts verdicts = CheckVerdicts(client, probes);
  EXPECT_EQ(verdicts.narrowed, 0);
  EXPECT_EQ(fixed.Terminate(), 0) << fixed.Log();
}

}  // namespace
}  // namespace nbspamd::testing
