// Golden tests of the verdict thresholds from feedback (rule R), each worked out by hand in its
// comment. Configured thresholds are the defaults, spam 1.0 and ham -0.6, unless said.
#include "model/feedback_thresholds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace nbspamd::model {
namespace {

constexpr VerdictThresholds kDefaults{.spam = 1.0, .ham = -0.6};
constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// n scores, all `value`.
std::vector<double> Same(std::size_t n, double value) { return std::vector<double>(n, value); }

// 999 hams and 999 spams are not enough: both thresholds stay configured.
TEST(FeedbackThresholdsTest, BelowTheWindowTheConfiguredThresholdsHold) {
  const FeedbackThresholds t = ThresholdsFromFeedback(Same(999, -3.0), Same(999, 3.0), kDefaults);
  EXPECT_EQ(t.thresholds.spam, 1.0);
  EXPECT_EQ(t.thresholds.ham, -0.6);
  EXPECT_FALSE(t.spam_from_feedback);
  EXPECT_FALSE(t.ham_from_feedback);
  EXPECT_EQ(t.hams, 999u);
  EXPECT_EQ(t.spams, 999u);
}

// 1,000 hams, the highest 0.7 (the others -1): spam threshold 0.7 + 0.1 = 0.8. No spams: the ham
// threshold stays -0.6.
TEST(FeedbackThresholdsTest, TheSpamThresholdIsTheHighestHamPlusTheMargin) {
  std::vector<double> hams = Same(1000, -1.0);
  hams[500] = 0.7;
  const FeedbackThresholds t = ThresholdsFromFeedback(hams, {}, kDefaults);
  EXPECT_DOUBLE_EQ(t.thresholds.spam, 0.8);
  EXPECT_EQ(t.thresholds.ham, -0.6);
  EXPECT_TRUE(t.spam_from_feedback);
  EXPECT_FALSE(t.ham_from_feedback);
}

// Highest ham -0.5: -0.4 is below the floor, so 0.25. Highest ham 1.5: 1.6 is above the
// configured 1.0, so 1.0. With spam_threshold configured at 0.1 (below the floor), the floor is
// 0.1 too: the band never widens past the configured one.
TEST(FeedbackThresholdsTest, TheSpamThresholdStaysWithinTheFloorAndTheConfiguredOne) {
  EXPECT_EQ(ThresholdsFromFeedback(Same(1000, -0.5), {}, kDefaults).thresholds.spam, 0.25);
  EXPECT_EQ(ThresholdsFromFeedback(Same(1000, 1.5), {}, kDefaults).thresholds.spam, 1.0);
  const FeedbackThresholds low =
      ThresholdsFromFeedback(Same(1000, -0.5), {}, {.spam = 0.1, .ham = -0.6});
  EXPECT_EQ(low.thresholds.spam, 0.1);
}

// 1,000 spams: ten at -2 and the rest at 0.5. Sorted ascending, index floor(0.01 · 1000) = 10 is
// the first 0.5, so the ham threshold is the double just below 0.5: a spam at 0.5 is not ham.
// Ten at -2, one at 0.2, the rest 0.5: index 10 is 0.2.
TEST(FeedbackThresholdsTest, TheHamThresholdIsJustBelowTheFirstPercentileOfSpam) {
  std::vector<double> spams = Same(1000, 0.5);
  for (std::size_t i = 0; i < 10; ++i) spams[i] = -2.0;
  FeedbackThresholds t = ThresholdsFromFeedback({}, spams, kDefaults);
  EXPECT_EQ(t.thresholds.ham, std::nextafter(0.5, kMinusInfinity));
  EXPECT_LT(t.thresholds.ham, 0.5);
  EXPECT_TRUE(t.ham_from_feedback);
  EXPECT_EQ(t.thresholds.spam, 1.0);
  EXPECT_EQ(DecideVerdict(0.5, t.thresholds, false), Verdict::kUnsure);
  spams[999] = 0.2;
  t = ThresholdsFromFeedback({}, spams, kDefaults);
  EXPECT_EQ(t.thresholds.ham, std::nextafter(0.2, kMinusInfinity));
}

// Eleven spams at -2 or below make index 10 -2: below -0.6, so -0.6. Hams up to 0.2 put the spam
// threshold at 0.3, and spams whose 1st percentile is 0.5 would put the ham threshold above it:
// it is 0.3, the two-way decision.
TEST(FeedbackThresholdsTest, TheHamThresholdStaysWithinTheConfiguredOneAndTheSpamThreshold) {
  std::vector<double> spams = Same(1000, 0.5);
  for (std::size_t i = 0; i < 11; ++i) spams[i] = -2.0;
  EXPECT_EQ(ThresholdsFromFeedback({}, spams, kDefaults).thresholds.ham, -0.6);
  const FeedbackThresholds t = ThresholdsFromFeedback(Same(1000, 0.2), Same(1000, 0.5), kDefaults);
  EXPECT_DOUBLE_EQ(t.thresholds.spam, 0.3);
  EXPECT_EQ(t.thresholds.ham, t.thresholds.spam);
  EXPECT_EQ(DecideVerdict(0.3, t.thresholds, false), Verdict::kHam);
  EXPECT_EQ(DecideVerdict(0.31, t.thresholds, false), Verdict::kSpam);
}

// Only the first 1,000 of each span count (the newest): a 1,001st ham at 5 changes nothing, and
// a NaN among the first 1,000 leaves 999, too few.
TEST(FeedbackThresholdsTest, OnlyTheNewestWindowOfFiniteScoresCounts) {
  std::vector<double> hams = Same(1001, 0.0);
  hams[1000] = 5.0;
  EXPECT_DOUBLE_EQ(ThresholdsFromFeedback(hams, {}, kDefaults).thresholds.spam, 0.25);
  hams[3] = std::nan("");
  const FeedbackThresholds t = ThresholdsFromFeedback(hams, {}, kDefaults);
  EXPECT_EQ(t.hams, 999u);
  EXPECT_FALSE(t.spam_from_feedback);
  EXPECT_EQ(t.thresholds.spam, 1.0);
}

// The thresholds are order statistics of the windows, whatever order the scores come in: the
// same as those of a sorted copy, computed here by hand, for scores in arrival order.
TEST(FeedbackThresholdsTest, TheScoresOrderDoesNotMatter) {
  std::mt19937 random(20261206);
  std::normal_distribution<double> ham_score(-1.5, 0.4);
  std::normal_distribution<double> spam_score(1.2, 0.5);
  std::vector<double> hams(1000), spams(1000);
  for (double& s : hams) s = ham_score(random);
  for (double& s : spams) s = spam_score(random);
  std::vector<double> sorted_hams = hams, sorted_spams = spams;
  std::ranges::sort(sorted_hams);
  std::ranges::sort(sorted_spams);
  const FeedbackThresholds t = ThresholdsFromFeedback(hams, spams, kDefaults);
  ASSERT_TRUE(t.spam_from_feedback && t.ham_from_feedback);
  EXPECT_EQ(t.thresholds.spam, std::clamp(sorted_hams.back() + kSpamMargin, kSpamFloor, 1.0));
  EXPECT_EQ(t.thresholds.ham,
            std::min(std::max(std::nextafter(sorted_spams[10], kMinusInfinity), -0.6),
                     t.thresholds.spam));
  std::ranges::shuffle(hams, random);
  std::ranges::shuffle(spams, random);
  const FeedbackThresholds shuffled = ThresholdsFromFeedback(hams, spams, kDefaults);
  EXPECT_EQ(shuffled.thresholds.spam, t.thresholds.spam);
  EXPECT_EQ(shuffled.thresholds.ham, t.thresholds.ham);
}

}  // namespace
}  // namespace nbspamd::model
