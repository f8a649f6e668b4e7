// Golden tests of what a threshold pair does to held-out scores (model/threshold_outcomes.h) and
// of a token's figures and the strongest tokens (model/token_knowledge.h), each worked out by
// hand in its comment.
#include "model/threshold_outcomes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/token_knowledge.h"

namespace nbspamd::model {
namespace {

// Five hams and four spams:
//   hams  -1.5, -0.6, 0.2, 1.0, 1.3
//   spams -0.7, 0.5, 1.0, 2.5
// With the defaults spam 1.0 / ham -0.6 (spam: score > 1.0; ham: score <= -0.6):
//   hams:  -1.5 and -0.6 ham (−0.6 is at the ham threshold: ham), 0.2 and 1.0 unsure (1.0 is at
//          the spam threshold: not spam), 1.3 spam → ham 2, unsure 2, spam 1: 1/5 = 0.2 called
//          spam;
//   spams: -0.7 ham (missed), 0.5 and 1.0 unsure, 2.5 spam → 1/4 = 0.25 missed, 2/4 unsure.
// With the two-way pair 0.3 / 0.3: hams -1.5, -0.6, 0.2 ham, 1.0 and 1.3 spam (2/5 = 0.4);
// spams -0.7 ham, 0.5, 1.0, 2.5 spam: 1/4 missed, none unsure.
HeldOutWindow Golden() {
  return {.hams = {1.0, -1.5, 0.2, 1.3, -0.6}, .spams = {2.5, -0.7, 1.0, 0.5}};
}

TEST(ThresholdOutcomesTest, ThePairGivesEachScoreTheVerdictOfModelVerdict) {
  const SortedHeldOut held_out(Golden());
  EXPECT_EQ(held_out.hams(), 5u);
  EXPECT_EQ(held_out.spams(), 4u);
  const ThresholdOutcome o = held_out.OutcomeOf({.spam = 1.0, .ham = -0.6});
  EXPECT_EQ(o.ham, (VerdictCounts{.total = 5, .spam = 1, .unsure = 2, .ham = 2}));
  EXPECT_EQ(o.spam, (VerdictCounts{.total = 4, .spam = 1, .unsure = 2, .ham = 1}));
  EXPECT_DOUBLE_EQ(*o.ham.Rate(o.ham.spam), 0.2);
  EXPECT_DOUBLE_EQ(*o.spam.Rate(o.spam.ham), 0.25);
  EXPECT_DOUBLE_EQ(*o.spam.Rate(o.spam.unsure), 0.5);
  // The counts are those of DecideVerdict, score by score.
  VerdictCounts by_verdict{.total = 5};
  for (const double score : Golden().hams) {
    switch (DecideVerdict(score, {.spam = 1.0, .ham = -0.6}, /*third_class=*/false)) {
      case Verdict::kSpam:
        ++by_verdict.spam;
        break;
      case Verdict::kUnsure:
        ++by_verdict.unsure;
        break;
      case Verdict::kHam:
        ++by_verdict.ham;
        break;
    }
  }
  EXPECT_EQ(by_verdict, o.ham);
}

TEST(ThresholdOutcomesTest, EqualThresholdsAreTheTwoWayDecision) {
  const ThresholdOutcome o = SortedHeldOut(Golden()).OutcomeOf({.spam = 0.3, .ham = 0.3});
  EXPECT_EQ(o.ham, (VerdictCounts{.total = 5, .spam = 2, .unsure = 0, .ham = 3}));
  EXPECT_EQ(o.spam, (VerdictCounts{.total = 4, .spam = 3, .unsure = 0, .ham = 1}));
  EXPECT_DOUBLE_EQ(*o.ham.Rate(o.ham.spam), 0.4);
}

// The curve from -1 to 1 by 0.5: at t = -1, hams above: -0.6, 0.2, 1.0, 1.3 = 4; spams at or
// below: none = 0. t = -0.5: 3 (0.2, 1.0, 1.3); 1 (-0.7). t = 0: 3; 1. t = 0.5: 2 (1.0, 1.3);
// 2 (-0.7, 0.5). t = 1: 1 (1.3); 3 (-0.7, 0.5, 1.0).
// The pair (1.0, -0.6) from the curve alone: hams called spam = hams_above(1.0) = 1.
TEST(ThresholdOutcomesTest, TheCurveCountsEachSideOfEachThreshold) {
  const std::vector<ThresholdPoint> curve = SortedHeldOut(Golden()).Curve(-1.0, 1.0, 0.5);
  ASSERT_EQ(curve.size(), 5u);
  const std::uint64_t hams[] = {4, 3, 3, 2, 1};
  const std::uint64_t spams[] = {0, 1, 1, 2, 3};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(curve[i].threshold, -1.0 + 0.5 * static_cast<double>(i));
    EXPECT_EQ(curve[i].hams_above, hams[i]) << i;
    EXPECT_EQ(curve[i].spams_at_or_below, spams[i]) << i;
  }
  // A decimal step whose sum misses the end by a rounding error still ends there: 0.1 × 20.
  EXPECT_EQ(SortedHeldOut(Golden()).Curve(-1.0, 1.0, 0.1).size(), 21u);
}

TEST(ThresholdOutcomesTest, NoFeedbackGivesNoRateAndScoresNotFiniteAreLeftOut) {
  const SortedHeldOut none(HeldOutWindow{.hams = {std::numeric_limits<double>::quiet_NaN()},
                                         .spams = {std::numeric_limits<double>::infinity()}});
  EXPECT_EQ(none.hams(), 0u);
  const ThresholdOutcome o = none.OutcomeOf({.spam = 1.0, .ham = -0.6});
  EXPECT_EQ(o.ham.total, 0u);
  EXPECT_FALSE(o.ham.Rate(o.ham.spam).has_value());
}

// A model of spam (10 documents, 100 tokens) and ham (20 documents, 300 tokens), |V| 50, alpha 1:
// denominators 100 + 50 = 150 and 300 + 50 = 350. A token counted 9 in spam and 2 in ham:
// P(w|spam) = 10/150 = 0.0666..., P(w|ham) = 3/350 = 0.00857..., weight ln(10/150) − ln(3/350) =
// ln(3500/450) = ln(7.777...) = 2.0513.
ModelStats GoldenStats() {
  return {.classes = {{"spam", 10, 100}, {"ham", 20, 300}}, .vocabulary_size = 50};
}

TEST(TokenKnowledgeTest, FiguresAreTheClassifiersEstimates) {
  const std::vector<std::uint64_t> counts = {9, 2};
  const TokenFigures f = FiguresOf(counts, GoldenStats(), 1.0);
  ASSERT_EQ(f.probabilities.size(), 2u);
  EXPECT_DOUBLE_EQ(f.probabilities[0], 10.0 / 150.0);
  EXPECT_DOUBLE_EQ(f.probabilities[1], 3.0 / 350.0);
  ASSERT_TRUE(f.weight.has_value());
  EXPECT_NEAR(*f.weight, std::log(3500.0 / 450.0), 1e-12);
  EXPECT_NEAR(*f.weight, 2.0513, 1e-4);
  // An unknown token: (0 + 1) / 150 and 1 / 350, weight ln(350/150) = 0.8473.
  const TokenFigures unknown = FiguresOf({}, GoldenStats(), 1.0);
  EXPECT_NEAR(*unknown.weight, std::log(350.0 / 150.0), 1e-12);
  // No ham documents: no weight.
  ModelStats no_ham = GoldenStats();
  no_ham.classes[1].documents = 0;
  EXPECT_FALSE(FiguresOf(counts, no_ham, 1.0).weight.has_value());
}

// With alpha 1 and the stats above, weight(s, h) = ln((s + 1) / 150) − ln((h + 1) / 350):
//   A (9, 0): ln(10·350 / 150) = ln(23.33) = 3.150
//   B (4, 0): ln(5·350 / 150) = ln(11.67) = 2.457
//   C (1, 0): ln(2·350 / 150) = 1.540, but counted 1 < min_count 2: left out (a hapax)
//   D (0, 9): ln(350 / 1500) = −1.455
//   E (2, 6): ln(3·350 / (7·150)) = ln(1) = 0: on neither list
//   F (0, 3): ln(350 / 600) = −0.539
// With limit 2: spam A, B; ham D, F. Eligible: A, B, D, E, F = 5.
TEST(TokenKnowledgeTest, TheStrongestTokensOfEachClassPassTheMinimumCount) {
  StrongestTokens strongest(GoldenStats(), 1.0, {.limit = 2, .min_count = 2});
  const std::vector<std::pair<TokenHash, std::vector<std::uint64_t>>> tokens = {
      {0xF, {0, 3}}, {0xC, {1, 0}}, {0xA, {9, 0}}, {0xE, {2, 6}}, {0xD, {0, 9}}, {0xB, {4}}};
  for (const auto& [hash, counts] : tokens) strongest.Offer(hash, counts);
  EXPECT_EQ(strongest.eligible(), 5u);
  const std::vector<StrongToken> spam = strongest.Spam();
  ASSERT_EQ(spam.size(), 2u);
  EXPECT_EQ(spam[0].hash, 0xAu);
  EXPECT_NEAR(spam[0].weight, std::log(3500.0 / 150.0), 1e-12);
  EXPECT_EQ(spam[1].hash, 0xBu);
  EXPECT_EQ(spam[1].spam, 4u);
  EXPECT_EQ(spam[1].ham, 0u);
  const std::vector<StrongToken> ham = strongest.Ham();
  ASSERT_EQ(ham.size(), 2u);
  EXPECT_EQ(ham[0].hash, 0xDu);
  EXPECT_NEAR(ham[0].weight, std::log(350.0 / 1500.0), 1e-12);
  EXPECT_EQ(ham[1].hash, 0xFu);
  EXPECT_NEAR(ham[1].weight, -0.539, 1e-3);
}

// Many offers, more than twice the limit (so the candidates are pruned as they come): the result
// is the same as the whole sorted list's first `limit`, ties broken by hash.
TEST(TokenKnowledgeTest, PruningKeepsTheSameTokensAsSortingAll) {
  StrongestTokens strongest(GoldenStats(), 1.0, {.limit = 3, .min_count = 1});
  for (TokenHash h = 100; h > 0; --h) {
    strongest.Offer(h, std::vector<std::uint64_t>{h % 7 + 1, 0});
  }
  const std::vector<StrongToken> spam = strongest.Spam();
  ASSERT_EQ(spam.size(), 3u);
  // The largest spam count is 7 (h % 7 == 6): h = 6, 13, 20, ... ; the smallest three hashes.
  EXPECT_EQ(spam[0].hash, 6u);
  EXPECT_EQ(spam[1].hash, 13u);
  EXPECT_EQ(spam[2].hash, 20u);
  EXPECT_TRUE(strongest.Ham().empty());
}

}  // namespace
}  // namespace nbspamd::model
