// RecentFeedback against a real MemoryStore: the thresholds follow the newest feedback, and what
// the updates leave is what a fresh load of the same ledger gives (a restart, another daemon).
#include "core/recent_feedback.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/learning.h"
#include "storage/memory_store.h"
#include "tests/support/test_text.h"
#include "tests/support/token_bags.h"

namespace nbspamd::core {
namespace {

using test_support::BagOfWords;
using test_support::Numbered;

constexpr model::VerdictThresholds kDefaults{.spam = 1.0, .ham = -0.6};

class RecentFeedbackTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(recent_.Load(store_).has_value()); }

  // Applies `delta` to the store and tells recent_, as the training writer does.
  void Apply(model::Delta delta) {
    const std::vector<model::Delta> deltas{std::move(delta)};
    auto applied = store_.ApplyBatch(deltas);
    ASSERT_TRUE(applied.has_value());
    ASSERT_TRUE((*applied)[0].has_value()) << (*applied)[0].error().message;
    ASSERT_TRUE(recent_.Applied(store_, deltas, *applied).has_value());
  }
  void Learn(const std::string& id, const std::string& label, double score, std::int64_t at,
             std::string source = "feedback") {
    auto learned = store_.FindLearned(id);
    ASSERT_TRUE(learned.has_value());
    Apply(model::PlanLearn(id, label, BagOfWords("word " + id), *learned, *store_.Stats(),
                           {std::move(source), at}, model::HeldOutScore{model::kScoreScale, score})
              .delta);
  }
  void Forget(const std::string& id) {
    auto learned = store_.FindLearned(id);
    ASSERT_TRUE(learned.has_value() && learned->has_value());
    Apply(model::PlanForget(id, **learned, *store_.Stats()));
  }
  // The histogram a fresh load of the store fits spam_confidence on.
  model::FeedbackHistogram ReloadedHistogram() {
    RecentFeedback fresh(kDefaults);
    EXPECT_TRUE(fresh.Load(store_).has_value());
    return fresh.Calibration()->histogram();
  }
  // What a fresh load of the store gives.
  model::FeedbackThresholds Reloaded() {
    RecentFeedback fresh(kDefaults);
    EXPECT_TRUE(fresh.Load(store_).has_value());
    return *fresh.Current();
  }

  storage::MemoryStore store_;
  RecentFeedback recent_{kDefaults};
};

// HeldOut publishes the scores the thresholds were computed from, newest first, autolearn's left
// out and a forgotten one gone: what GET /model/thresholds reads (model/threshold_outcomes.h).
TEST_F(RecentFeedbackTest, HeldOutIsTheWindowTheThresholdsReadNewestFirst) {
  EXPECT_TRUE(recent_.HeldOut()->hams.empty());
  Learn("h1", "ham", -1.5, 100);
  Learn("h2", "ham", 0.2, 200);
  Learn("s1", "spam", 2.5, 300);
  Learn("auto", "ham", 0.9, 400, std::string(model::kAutolearnSource));
  EXPECT_EQ(recent_.HeldOut()->hams, (std::vector<double>{0.2, -1.5}));
  EXPECT_EQ(recent_.HeldOut()->spams, (std::vector<double>{2.5}));
  Forget("h2");
  EXPECT_EQ(recent_.HeldOut()->hams, (std::vector<double>{-1.5}));
  const model::ThresholdOutcome outcome =
      model::SortedHeldOut(*recent_.HeldOut()).OutcomeOf(kDefaults);
  EXPECT_EQ(outcome.ham.ham, 1u);
  EXPECT_EQ(outcome.spam.spam, 1u);
}

// 999 hams leave the spam threshold at 1; the 1,000th, at 0.3 the highest, makes it 0.4. An
// autolearned ham at 0.9 is no feedback. 1,000 spams, ten at -3 and the rest at 0.2, put the ham
// threshold just below 0.2 (index 10 of the sorted window). Then 1,000 newer hams at -1 push the
// one at 0.3 out of the window: 0.1 − 1 is under the floor, so 0.25.
TEST_F(RecentFeedbackTest, TheThresholdsFollowTheNewestWindowOfEachClass) {
  for (int i = 0; i < 999; ++i) Learn(Numbered("h", i), "ham", -0.5, 100 + i);
  EXPECT_EQ(recent_.Current()->thresholds.spam, 1.0);
  EXPECT_EQ(recent_.Current()->hams, 999u);
  Learn("auto", "ham", 0.9, 5000, std::string(model::kAutolearnSource));
  Learn("h-last", "ham", 0.3, 2000);
  EXPECT_DOUBLE_EQ(recent_.Current()->thresholds.spam, 0.4);
  EXPECT_TRUE(recent_.Current()->spam_from_feedback);
  EXPECT_EQ(recent_.Current()->thresholds.ham, -0.6);

  for (int i = 0; i < 1000; ++i) Learn(Numbered("s", i), "spam", i < 10 ? -3.0 : 0.2, 3000 + i);
  EXPECT_EQ(recent_.Current()->thresholds.ham,
            std::nextafter(0.2, -std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(recent_.Current()->ham_from_feedback);
  EXPECT_EQ(*recent_.Current(), Reloaded());

  for (int i = 0; i < 1000; ++i) Learn(Numbered("n", i), "ham", -1.0, 6000 + i);
  EXPECT_EQ(recent_.Current()->thresholds.spam, 0.25);
  EXPECT_EQ(*recent_.Current(), Reloaded());
}

// A relearn moves a record to its new class; a forget takes it out; each as a fresh load says.
TEST_F(RecentFeedbackTest, RelearnsAndForgetsKeepItAsTheLedgerSays) {
  for (int i = 0; i < 1000; ++i) Learn(Numbered("h", i), "ham", -0.5, 100 + i);
  Learn("x", "spam", 0.8, 5000);
  EXPECT_DOUBLE_EQ(recent_.Current()->thresholds.spam, 0.25);
  Learn("x", "ham", 0.8, 5001);  // A correction: its held-out score stays 0.8, now a ham's.
  EXPECT_DOUBLE_EQ(recent_.Current()->thresholds.spam, 0.9);
  EXPECT_EQ(*recent_.Current(), Reloaded());
  Forget("x");
  EXPECT_DOUBLE_EQ(recent_.Current()->thresholds.spam, 0.25);
  Forget("h0");
  EXPECT_EQ(recent_.Current()->hams, 999u);
  EXPECT_EQ(recent_.Current()->thresholds.spam, 1.0);
  EXPECT_EQ(*recent_.Current(), Reloaded());
}

// spam_confidence is fitted on the held-out scores of the records held (every one with a score,
// both classes as they came; autolearn's and other labels' left out): not ready below
// kMinFeedbackPerClass of a class, then the fit of exactly that histogram, and a forget or a
// relearn moves it as a fresh load of the ledger says.
TEST_F(RecentFeedbackTest, SpamConfidenceIsFittedOnTheHeldOutScoresHeld) {
  model::FeedbackHistogram expected;
  for (int i = 0; i < 20; ++i) {
    Learn(Numbered("h", i), "ham", -1.0, 100 + i);
    expected.Add({.bin = model::CalibrationBin(-1.0), .spam = false});
  }
  for (int i = 0; i < 19; ++i) {
    Learn(Numbered("s", i), "spam", 1.0, 200 + i);
    expected.Add({.bin = model::CalibrationBin(1.0), .spam = true});
  }
  Learn("auto", "spam", 1.5, 300, std::string(model::kAutolearnSource));
  Learn("news", "newsletter", 0.5, 301);
  EXPECT_EQ(recent_.Calibration()->histogram(), expected);
  EXPECT_FALSE(recent_.Calibration()->ready());
  EXPECT_EQ(recent_.Calibration()->SpamConfidence(0.0), std::nullopt);

  Learn("s-last", "spam", 0.2, 400);
  expected.Add({.bin = model::CalibrationBin(0.2), .spam = true});
  EXPECT_EQ(recent_.Calibration()->histogram(), expected);
  ASSERT_TRUE(recent_.Calibration()->ready());
  const model::Calibration by_hand(expected);
  EXPECT_EQ(recent_.Calibration()->SpamConfidence(0.1), by_hand.SpamConfidence(0.1));
  EXPECT_GT(*recent_.Calibration()->SpamConfidence(0.8), 0.5);
  EXPECT_LT(*recent_.Calibration()->SpamConfidence(-0.8), 0.5);

  Learn("s-last", "ham", 0.2, 401);  // A correction: its score is now a ham's.
  --expected.spam[model::CalibrationBin(0.2)];
  ++expected.ham[model::CalibrationBin(0.2)];
  EXPECT_EQ(recent_.Calibration()->histogram(), expected);
  EXPECT_FALSE(recent_.Calibration()->ready());  // 19 spams again.
  Forget("h3");
  --expected.ham[model::CalibrationBin(-1.0)];
  EXPECT_EQ(recent_.Calibration()->histogram(), expected);
  EXPECT_EQ(ReloadedHistogram(), expected);
}

// With kHorizon records held, a forget lets the next-newest record of the ledger in: an old ham
// at 0.6, beyond the horizon, completes the window of 1,000 hams once a spam is forgotten. The
// calibration holds the same records: the old ham's score leaves it, then comes back.
TEST_F(RecentFeedbackTest, AForgetAtTheHorizonBringsTheNextNewestRecordIn) {
  Learn("old", "ham", 0.6, 1);
  for (std::size_t i = 0; i < 999; ++i) Learn(Numbered("h", i), "ham", -1.0, 10);
  for (std::size_t i = 0; i + 999 < RecentFeedback::kHorizon; ++i) {
    Learn(Numbered("s", i), "spam", 2.0, 20);
  }
  EXPECT_EQ(recent_.Current()->hams, 999u);
  EXPECT_EQ(recent_.Current()->thresholds.spam, 1.0);
  const model::FeedbackHistogram held = recent_.Calibration()->histogram();
  EXPECT_EQ(held.HamTotal(), 999u);
  EXPECT_EQ(held.ham[model::CalibrationBin(0.6)], 0u);
  EXPECT_EQ(held.SpamTotal(), RecentFeedback::kHorizon - 999);
  Forget("s7");
  EXPECT_EQ(recent_.Current()->hams, 1000u);
  EXPECT_DOUBLE_EQ(recent_.Current()->thresholds.spam, 0.7);
  EXPECT_EQ(*recent_.Current(), Reloaded());
  const model::FeedbackHistogram after = recent_.Calibration()->histogram();
  EXPECT_EQ(after.HamTotal(), 1000u);
  EXPECT_EQ(after.ham[model::CalibrationBin(0.6)], 1u);
  EXPECT_EQ(after.SpamTotal(), RecentFeedback::kHorizon - 1000);
  EXPECT_EQ(after, ReloadedHistogram());
}

}  // namespace
}  // namespace nbspamd::core
