// spam_confidence through the real daemon: absent until there is enough feedback, then a
// probability that never decreases with the score, identical after a restart and in a backup,
// and exactly undone by a forget; `nbspamd check` agrees with the stored calibration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <utility>
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

constexpr int kFeedbackPerClass = 20;  // model::kMinFeedbackPerClass.

// `prefix` followed by `n` (a helper: GCC 12 warns wrongly about "literal" + std::to_string).
using test_support::Numbered;

double Feedback(HttpClient& client, const std::string& label) {
  const std::string metrics = client.Send(http::verb::get, "/metrics").body();
  const std::string key = "nbspamd_calibration_feedback{class=\"" + label + "\"} ";
  const std::size_t at = metrics.find(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << key << "missing in\n" << metrics;
    return -1;
  }
  return std::stod(metrics.substr(at + key.size()));
}

class CalibrationTest : public ::testing::Test {
 protected:
  DaemonProcess Start(const std::string& data_dir) {
    auto daemon = DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", data_dir,
                                        "--threads", "2", "--backup-dir", dir_.Join("backups")});
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  void Train(HttpClient& client, const std::string& label, const std::string& text,
             const std::string& id) {
    const auto response =
        client.Send(http::verb::post, "/train?label=" + label + "&id=" + id, text);
    ASSERT_EQ(response.result(), http::status::ok) << response.body();
  }

  // The /classify answers of the probes, as bodies.
  std::vector<std::string> Answers(HttpClient& client) {
    std::vector<std::string> answers;
    for (const std::string& probe : probes_) {
      const auto response = client.Send(http::verb::post, "/classify", probe);
      EXPECT_EQ(response.result(), http::status::ok) << response.body();
      answers.push_back(WithoutScanId(response.body()));
    }
    return answers;
  }

  TempDir dir_;
  std::string data_ = dir_.Join("model");
  std::vector<std::string> probes_;
};

TEST_F(CalibrationTest, SpamConfidenceIsMonotoneSurvivesRestartsAndForgetUndoesItExactly) {
  MessageMaker maker(20261124);
  for (int i = 0; i < 30; ++i) probes_.push_back(maker.Make(i % 2 == 0));
  std::vector<std::string> after_training;
  {
    DaemonProcess daemon = Start(data_);
    HttpClient client(daemon.port());
    // The first spam and the first ham are learned before the model can score anything: no
    // held-out score. Every later one has one.
    int learned = 0;
    for (; learned < kFeedbackPerClass; ++learned) {
      Train(client, "spam", maker.Make(true), Numbered("s", learned));
      Train(client, "ham", maker.Make(false), Numbered("h", learned));
    }
    EXPECT_EQ(Feedback(client, "spam"), kFeedbackPerClass - 1);
    EXPECT_EQ(Feedback(client, "ham"), kFeedbackPerClass - 1);
    json::value answer = client.PostJson("/classify", probes_[0]);
    ASSERT_TRUE(answer.at("score").is_number());
    EXPECT_TRUE(answer.at("spam_confidence").is_null()) << "19 of each class are not enough";

    for (; learned < 60; ++learned) {
      Train(client, "spam", maker.Make(true), Numbered("s", learned));
      Train(client, "ham", maker.Make(false), Numbered("h", learned));
    }
    EXPECT_EQ(Feedback(client, "spam"), 59);
    EXPECT_EQ(Feedback(client, "ham"), 59);

    // Present, a probability, and never lower for a higher score.
    after_training = Answers(client);
    std::vector<std::pair<double, double>> by_score;
    for (const std::string& body : after_training) {
      const json::value parsed = json::parse(body);
      ASSERT_TRUE(parsed.at("spam_confidence").is_number()) << body;
      const double confidence = parsed.at("spam_confidence").to_number<double>();
      EXPECT_GT(confidence, 0.0);
      EXPECT_LT(confidence, 1.0);
      by_score.emplace_back(parsed.at("score").to_number<double>(), confidence);
    }
    std::sort(by_score.begin(), by_score.end());
    for (std::size_t i = 1; i < by_score.size(); ++i) {
      EXPECT_GE(by_score[i].second, by_score[i - 1].second)
          << "score " << by_score[i - 1].first << " → " << by_score[i].first;
    }
    // With 59 held-out scores of each class (some of them ambiguous on purpose), the prior of
    // each bin and the pooling keep the ends short of 0 and 1.
    EXPECT_LT(by_score.front().second, 0.2) << "the most ham-like probe";
    EXPECT_GT(by_score.back().second, 0.7) << "the most spam-like probe";

    // A learn, then its forget: everything as before, to the bit.
    Train(client, "spam", maker.Make(true), "extra");
    EXPECT_EQ(Feedback(client, "spam"), 60);
    EXPECT_NE(Answers(client), after_training);
    ASSERT_EQ(client.Send(http::verb::post, "/forget?id=extra", "").result(), http::status::ok);
    EXPECT_EQ(Feedback(client, "spam"), 59);
    EXPECT_EQ(Answers(client), after_training);

    // A relearn moves the message's held-out score to its new class.
    const std::string moved = maker.Make(true);
    Train(client, "spam", moved, "moved");
    Train(client, "ham", moved, "moved");  // Relearned as ham.
    EXPECT_EQ(Feedback(client, "spam"), 59);
    EXPECT_EQ(Feedback(client, "ham"), 60);
    ASSERT_EQ(client.Send(http::verb::post, "/forget?id=moved", "").result(), http::status::ok);
    EXPECT_EQ(Answers(client), after_training);

    const auto backup = client.Send(http::verb::post, "/admin/backup", "");
    ASSERT_EQ(backup.result(), http::status::ok) << backup.body();
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }

  // The stored calibration agrees with the ledger.
  const ProcessExit check = RunToExit({"check", "--data-dir", data_});
  EXPECT_EQ(check.status, 0) << check.output;

  // A restart, and a daemon on the backup: the same answers, spam_confidence included.
  DaemonProcess restarted = Start(data_);
  HttpClient client(restarted.port());
  EXPECT_EQ(Answers(client), after_training);
  EXPECT_EQ(restarted.Terminate(), 0) << restarted.Log();
  const auto backups = std::filesystem::directory_iterator(dir_.Join("backups"));
  DaemonProcess restored = Start(backups->path().string());
  HttpClient restored_client(restored.port());
  EXPECT_EQ(Answers(restored_client), after_training);
  EXPECT_EQ(restored.Terminate(), 0) << restored.Log();
}

}  // namespace
}  // namespace nbspamd::testing
