// Guarded autolearn through the real daemon (core/autolearn.h, docs/API.md "Autolearn"): off by
// default; on, a confidently classified message is learned with source autolearn, a person's
// label relearns it, the balance guard holds a class that is ahead, and a rollback of the source
// undoes every autolearn at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

// `prefix` followed by `n` (a helper: GCC 12 warns wrongly about "literal" + std::to_string).
using test_support::Numbered;

// Messages of one class's own words (so that each is confidently classified), each once.
class Messages {
 public:
  std::string Make(bool spam) {
    static const std::vector<std::string> kSpam = {"cheap",  "pills", "winner", "prize",
                                                   "casino", "free",  "money",  "click"};
    static const std::vector<std::string> kHam = {"lunch", "meeting", "report",  "agenda",
                                                  "team",  "notes",   "project", "friday"};
    const std::vector<std::string>& own = spam ? kSpam : kHam;
    std::string text;
    for (int i = 0; i < 8; ++i) text += own[random_() % own.size()] + " ";
    text += "n";
    text += std::to_string(next_++);
    return text;
  }

 private:
  std::mt19937 random_{20261127};
  int next_ = 0;
};

class AutolearnTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    // Thresholds that 30 messages of feedback a class reach (Platt's targets keep
    // spam_confidence below (S + 1) / (S + 2) at first). Every fed-back message counted
    // (train_margin ""), so that the counts below are exact; autolearn under the default
    // error-driven training has a test of its own.
    std::vector<std::string> args = {"--train-margin",
                                     "",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--data-dir",
                                     dir_.Join(Numbered("model", started_++)),
                                     "--threads",
                                     "2",
                                     "--autolearn-spam-confidence",
                                     "0.9",
                                     "--autolearn-ham-confidence",
                                     "0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  // Trains `spam` spam and `ham` ham, interleaved, so that spam_confidence is given.
  void Bootstrap(HttpClient& client, int spam, int ham) {
    for (int i = 0; i < std::max(spam, ham); ++i) {
      if (i < spam) Train(client, "spam", messages_.Make(true), Numbered("s", i));
      if (i < ham) Train(client, "ham", messages_.Make(false), Numbered("h", i));
    }
    ASSERT_EQ(Metric(client, "nbspamd_calibration_ready"), 1);
  }

  json::value Train(HttpClient& client, const std::string& label, const std::string& text,
                    const std::string& id) {
    const auto response =
        client.Send(http::verb::post, "/train?label=" + label + "&id=" + id, text);
    EXPECT_EQ(response.result(), http::status::ok) << response.body();
    return json::parse(response.body());
  }

  // Classifies `text` as `id` and checks that the verdict is confident.
  void ClassifyConfident(HttpClient& client, const std::string& text, const std::string& id,
                         bool spam) {
    const json::value answer = client.PostJson("/classify?id=" + id, text);
    const double confidence = answer.at("spam_confidence").as_double();
    if (spam) {
      EXPECT_GE(confidence, 0.9) << json::serialize(answer);
    } else {
      EXPECT_LE(confidence, 0.1) << json::serialize(answer);
    }
  }

  // The ids /admin/learned lists for `source`.
  std::vector<std::string> Learned(HttpClient& client, const std::string& source) {
    const json::value answer = client.GetJson("/admin/learned?source=" + source);
    std::vector<std::string> ids;
    for (const json::value& message : answer.at("messages").as_array()) {
      ids.emplace_back(message.at("id").as_string());
    }
    return ids;
  }

  // A sample of /metrics; -1 when it is not there.
  double Metric(HttpClient& client, const std::string& sample) {
    const std::string metrics = client.Send(http::verb::get, "/metrics").body();
    const std::size_t at = metrics.find(sample + " ");
    if (at == std::string::npos) return -1;
    return std::stod(metrics.substr(at + sample.size() + 1));
  }

  // Waits (up to 10 s) until the sample reaches `value`: autolearn is asynchronous.
  double WaitForMetric(HttpClient& client, const std::string& sample, double value) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    double seen = Metric(client, sample);
    while (seen < value && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      seen = Metric(client, sample);
    }
    return seen;
  }

  std::uint64_t Documents(HttpClient& client, const std::string& label) {
    const json::value stats = client.GetJson("/stats");
    for (const json::value& c : stats.at("classes").as_array()) {
      if (c.at("label").as_string() == label) return c.at("documents").to_number<std::uint64_t>();
    }
    return 0;
  }

  TempDir dir_;
  int started_ = 0;
  Messages messages_;
};

TEST_F(AutolearnTest, OffByDefaultAConfidentVerdictChangesNothing) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  ASSERT_NO_FATAL_FAILURE(Bootstrap(client, 30, 30));
  const json::value before = client.GetJson("/stats");
  ClassifyConfident(client, messages_.Make(true), "m1", true);
  // A train after it is written after anything the classify could have queued.
  Train(client, "ham", messages_.Make(false), "barrier");
  EXPECT_TRUE(Learned(client, "autolearn").empty());
  EXPECT_EQ(Documents(client, "spam"),
            before.at("classes").at(0).at("documents").to_number<std::uint64_t>());
  EXPECT_EQ(Metric(client, "nbspamd_autolearn_total{class=\"spam\"}"), -1)
      << "no autolearn metrics while it is off";
}

TEST_F(AutolearnTest, LearnsConfidentMailAPersonRelearnsItAndRollbackUndoesItAll) {
  DaemonProcess daemon = Start({"--autolearn", "true"});
  HttpClient client(daemon.port());
  ASSERT_NO_FATAL_FAILURE(Bootstrap(client, 30, 30));
  const std::uint64_t spam_before = Documents(client, "spam");
  const std::uint64_t ham_before = Documents(client, "ham");

  // A confident spam is learned as spam, with source autolearn, under its id.
  const std::string first = messages_.Make(true);
  ClassifyConfident(client, first, "m1", true);
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_total{class=\"spam\"}", 1), 1);
  EXPECT_EQ(Learned(client, "autolearn"), std::vector<std::string>{"m1"});
  EXPECT_EQ(Documents(client, "spam"), spam_before + 1);
  // Classified again: learned already.
  ClassifyConfident(client, first, "m1", true);
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_skipped_total{reason=\"already_learned\"}", 1),
            1);
  EXPECT_EQ(Documents(client, "spam"), spam_before + 1);

  // A person says it is ham: relearned, and it is theirs now.
  const json::value trained = Train(client, "ham", first, "m1");
  EXPECT_EQ(trained.at("status").as_string(), "relearned");
  EXPECT_TRUE(Learned(client, "autolearn").empty());
  EXPECT_EQ(Documents(client, "spam"), spam_before);
  EXPECT_EQ(Documents(client, "ham"), ham_before + 1);
  // And autolearn leaves it alone from then on.
  ClassifyConfident(client, first, "m1", true);
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_skipped_total{reason=\"already_learned\"}", 2),
            2);
  EXPECT_EQ(Documents(client, "ham"), ham_before + 1);

  // Several more, of both classes; then a rollback of the source removes exactly them.
  const json::value before_autolearn = client.GetJson("/stats");
  for (int i = 0; i < 4; ++i) {
    ClassifyConfident(client, messages_.Make(true), Numbered("a", i), true);
    ClassifyConfident(client, messages_.Make(false), Numbered("b", i), false);
  }
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_total{class=\"spam\"}", 5), 5);
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_total{class=\"ham\"}", 4), 4);
  EXPECT_EQ(Learned(client, "autolearn").size(), 8u);
  EXPECT_EQ(Documents(client, "spam"), spam_before + 4);
  const json::value rolled = client.PostJson("/admin/rollback?source=autolearn", "");
  EXPECT_EQ(rolled.at("forgotten").as_int64(), 8);
  EXPECT_TRUE(Learned(client, "autolearn").empty());
  EXPECT_EQ(client.GetJson("/stats"), before_autolearn);
  // The person's label stays.
  const std::vector<std::string> manual = Learned(client, "");
  EXPECT_NE(std::find(manual.begin(), manual.end(), "m1"), manual.end());
  EXPECT_EQ(Documents(client, "ham"), ham_before + 1);
}

// Under the default error-driven training a confident verdict scored beyond the margin is only
// checked by autolearn: recorded with source autolearn, counting nothing.
TEST_F(AutolearnTest, UnderErrorDrivenTrainingAConfidentVerdictIsOnlyChecked) {
  DaemonProcess daemon = Start({"--autolearn", "true", "--train-margin", "4"});
  HttpClient client(daemon.port());
  ASSERT_NO_FATAL_FAILURE(Bootstrap(client, 30, 30));
  const json::value before = client.GetJson("/stats");
  const json::value answer = client.PostJson("/classify?id=c1", messages_.Make(true));
  ASSERT_GE(answer.at("spam_confidence").as_double(), 0.9) << answer;
  ASSERT_GT(answer.at("score").as_double(), 4) << "beyond the margin: " << answer;
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_skipped_total{reason=\"checked\"}", 1), 1);
  EXPECT_EQ(Metric(client, "nbspamd_autolearn_total{class=\"spam\"}"), 0);
  EXPECT_EQ(Learned(client, "autolearn"), std::vector<std::string>{"c1"}) << "recorded";
  EXPECT_EQ(client.GetJson("/stats").at("documents"), before.at("documents")) << "not counted";
}

TEST_F(AutolearnTest, TheBalanceGuardHoldsBackTheClassThatIsAhead) {
  // 30 spam and 33 ham: one more ham would be more than 1.1 × 30 spam; one more spam is not.
  DaemonProcess daemon = Start({"--autolearn", "true", "--autolearn-max-class-ratio", "1.1"});
  HttpClient client(daemon.port());
  ASSERT_NO_FATAL_FAILURE(Bootstrap(client, 30, 33));
  ClassifyConfident(client, messages_.Make(false), "ham1", false);
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_skipped_total{reason=\"balance\"}", 1), 1);
  ClassifyConfident(client, messages_.Make(true), "spam1", true);
  EXPECT_EQ(WaitForMetric(client, "nbspamd_autolearn_total{class=\"spam\"}", 1), 1);
  EXPECT_EQ(Metric(client, "nbspamd_autolearn_total{class=\"ham\"}"), 0);
  EXPECT_EQ(Learned(client, "autolearn"), std::vector<std::string>{"spam1"});
  EXPECT_EQ(Documents(client, "ham"), 33u);
}

TEST_F(AutolearnTest, ThresholdsThatCrossAreAStartUpError) {
  auto daemon = DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("bad"),
                                      "--autolearn", "true", "--autolearn-spam-confidence", "0.2",
                                      "--autolearn-ham-confidence", "0.3"});
  ASSERT_FALSE(daemon.has_value());
  EXPECT_NE(daemon.error().find("autolearn_ham_confidence"), std::string::npos) << daemon.error();
}

}  // namespace
}  // namespace nbspamd::testing
