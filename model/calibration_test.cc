// Golden tests of the calibration fit, each computed by hand in its comment.
#include "model/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace nbspamd::model {
namespace {

void ExpectFitted(const std::vector<double>& fitted, const std::vector<double>& expected) {
  ASSERT_EQ(fitted.size(), expected.size());
  for (std::size_t b = 0; b < expected.size(); ++b) {
    EXPECT_NEAR(fitted[b], expected[b], 1e-15) << "bin " << b;
  }
}

// Four bins, prior strength 1.
//   spam = {0, 1, 0, 3}, ham = {2, 0, 1, 0}: S = 4, N = 7, base rate p0 = (4+1)/(7+2) = 5/9.
//   Each bin (s + p0) / (n + 1), weight n + 1:
//     b0 = (0 + 5/9) / 3 = 5/27   (w 3)     b1 = (1 + 5/9) / 2 = 7/9   (w 2)
//     b2 = (0 + 5/9) / 2 = 5/18   (w 2)     b3 = (3 + 5/9) / 4 = 8/9   (w 4)
//   PAV: b1 = 7/9 > b2 = 5/18 violates; pooled: (14/9 + 5/9) / (2 + 2) = 19/36, and
//   5/27 <= 19/36 <= 8/9 holds. Fitted: 5/27, 19/36, 19/36, 8/9.
TEST(CalibrationGoldenTest, PoolsAdjacentViolators) {
  const std::vector<std::uint64_t> spam{0, 1, 0, 3}, ham{2, 0, 1, 0};
  ExpectFitted(FitCalibration(spam, ham, 1.0), {5.0 / 27, 19.0 / 36, 19.0 / 36, 8.0 / 9});
}

// Three bins: spam = {2, 0, 0}, ham = {0, 1, 2}: S = 2, N = 5, p0 = 3/7.
//   b0 = (2 + 3/7) / 3 = 17/21 (w 3), b1 = (3/7) / 2 = 3/14 (w 2), b2 = (3/7) / 3 = 1/7 (w 3).
//   b0 > b1: pooled (17/7 + 3/7) / 5 = 4/7 (w 5); 4/7 > b2 = 1/7: pooled again,
//   (20/7 + 3/7) / 8 = 23/56 for all three.
TEST(CalibrationGoldenTest, PoolingCascadesBackwards) {
  const std::vector<std::uint64_t> spam{2, 0, 0}, ham{0, 1, 2};
  ExpectFitted(FitCalibration(spam, ham, 1.0), {23.0 / 56, 23.0 / 56, 23.0 / 56});
}

// Five bins with two empty ones: spam = {0, 0, 2, 0, 1}, ham = {3, 0, 1, 0, 0}: S = 3, N = 7,
// p0 = 4/9. b0 = (4/9) / 4 = 1/9, b2 = (2 + 4/9) / 4 = 11/18, b4 = (1 + 4/9) / 2 = 13/18: no
// violation. The empty bins take the line between their neighbours: b1 = (1/9 + 11/18) / 2 =
// 13/36, b3 = (11/18 + 13/18) / 2 = 2/3.
TEST(CalibrationGoldenTest, EmptyBinsLieOnTheLineBetweenTheirNeighbours) {
  const std::vector<std::uint64_t> spam{0, 0, 2, 0, 1}, ham{3, 0, 1, 0, 0};
  ExpectFitted(FitCalibration(spam, ham, 1.0), {1.0 / 9, 13.0 / 36, 11.0 / 18, 2.0 / 3, 13.0 / 18});
}

// Empty bins beyond the first and last non-empty ones take their value; no counts at all: 1/2.
TEST(CalibrationGoldenTest, EndsAreFlatAndNothingIsAHalf) {
  // spam = {0, 1, 0}, ham = {0, 0, 0}: p0 = 2/3, b1 = (1 + 2/3) / 2 = 5/6.
  const std::vector<std::uint64_t> spam{0, 1, 0}, ham{0, 0, 0};
  ExpectFitted(FitCalibration(spam, ham, 1.0), {5.0 / 6, 5.0 / 6, 5.0 / 6});
  const std::vector<std::uint64_t> none{0, 0};
  ExpectFitted(FitCalibration(none, none, 1.0), {0.5, 0.5});
}

// The daemon's layout: 100 bins of 0.04 over [-2, 2); bin b's centre is -2 + (b + 0.5) · 0.04.
TEST(CalibrationTest, BinsOfTheCurrentLayout) {
  EXPECT_EQ(CalibrationBin(-2.0), 0u);
  EXPECT_EQ(CalibrationBin(-7.5), 0u);
  EXPECT_EQ(CalibrationBin(std::nan("")), 0u);
  EXPECT_EQ(CalibrationBin(-1.97), 0u);
  EXPECT_EQ(CalibrationBin(0.0), 50u);
  EXPECT_EQ(CalibrationBin(0.079), 51u);
  EXPECT_EQ(CalibrationBin(1.999), 99u);
  EXPECT_EQ(CalibrationBin(2.0), 99u);
  EXPECT_EQ(CalibrationBin(40.0), 99u);
}

// 30 ham scores in bin 20 (centre -1.18), 30 spam in bin 80 (centre 1.22): S = 30, N = 60,
// p0 = 31/62 = 1/2. b20 = (0 + 1/2) / 31 = 1/62, b80 = (30 + 1/2) / 31 = 61/62. Between the two
// centres the confidence is the line from 1/62 to 61/62: at 0.02, halfway, it is 1/2; outside
// them it is flat.
TEST(CalibrationTest, SpamConfidenceInterpolatesBetweenBinCentres) {
  FeedbackHistogram histogram;
  histogram.ham[20] = 30;
  histogram.spam[80] = 30;
  const Calibration calibration(histogram);
  ASSERT_TRUE(calibration.ready());
  EXPECT_NEAR(*calibration.SpamConfidence(-1.18), 1.0 / 62, 1e-12);
  EXPECT_NEAR(*calibration.SpamConfidence(1.22), 61.0 / 62, 1e-12);
  EXPECT_NEAR(*calibration.SpamConfidence(0.02), 0.5, 1e-12);
  EXPECT_NEAR(*calibration.SpamConfidence(-0.58), 1.0 / 62 + 0.25 * (60.0 / 62), 1e-12);
  EXPECT_NEAR(*calibration.SpamConfidence(-5.0), 1.0 / 62, 1e-12);
  EXPECT_NEAR(*calibration.SpamConfidence(-1.2), 1.0 / 62, 1e-12);
  EXPECT_NEAR(*calibration.SpamConfidence(3.0), 61.0 / 62, 1e-12);
  EXPECT_FALSE(calibration.SpamConfidence(std::nan("")).has_value());
  EXPECT_FALSE(calibration.SpamConfidence(INFINITY).has_value());
}

TEST(CalibrationTest, NothingBeforeEnoughFeedbackOfBothClasses) {
  FeedbackHistogram histogram;
  histogram.ham[10] = kMinFeedbackPerClass;
  histogram.spam[90] = kMinFeedbackPerClass - 1;
  EXPECT_FALSE(Calibration(histogram).ready());
  EXPECT_FALSE(Calibration(histogram).SpamConfidence(0.5).has_value());
  histogram.spam[91] = 1;
  EXPECT_TRUE(Calibration(histogram).ready());
  EXPECT_TRUE(Calibration(histogram).SpamConfidence(0.5).has_value());
  EXPECT_FALSE(Calibration().ready());
}

TEST(CalibrationTest, MonotoneAndStrictlyBetweenZeroAndOneWhateverTheCounts) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 200; ++trial) {
    FeedbackHistogram histogram;
    const int filled = 1 + static_cast<int>(random() % 40);
    for (int i = 0; i < filled; ++i) {
      const std::uint32_t bin = random() % kCalibrationBins;
      (random() % 2 ? histogram.spam : histogram.ham)[bin] += 1 + random() % 50;
    }
    histogram.spam[random() % kCalibrationBins] += kMinFeedbackPerClass;
    histogram.ham[random() % kCalibrationBins] += kMinFeedbackPerClass;
    const Calibration calibration(histogram);
    ASSERT_TRUE(calibration.ready());
    double previous = 0;
    for (double score = -2.4; score <= 2.4; score += 0.0074) {
      const double p = *calibration.SpamConfidence(score);
      ASSERT_GT(p, 0.0);
      ASSERT_LT(p, 1.0);
      ASSERT_GE(p, previous - 1e-15) << "trial " << trial << " score " << score;
      previous = p;
    }
  }
}

TEST(CalibrationTest, FeedbackCellsOfLedgerRecords) {
  const LedgerEntry spam{"spam", {}, {}, HeldOutScore{kScoreScale, 0.6}};
  EXPECT_EQ(FeedbackCellOf(spam), (FeedbackCell{65, true}));
  const LedgerEntry ham{"ham", {}, {}, HeldOutScore{kScoreScale, -0.6}};
  EXPECT_EQ(FeedbackCellOf(ham), (FeedbackCell{35, false}));
  EXPECT_FALSE(FeedbackCellOf(LedgerEntry{"ham", {}, {}, std::nullopt}));
  EXPECT_FALSE(FeedbackCellOf(LedgerEntry{"news", {}, {}, HeldOutScore{kScoreScale, 0.3}}));
  EXPECT_FALSE(FeedbackCellOf(LedgerEntry{"ham", {}, {}, HeldOutScore{kScoreScale, NAN}}));
  EXPECT_FALSE(FeedbackCellOf(LedgerEntry{"ham", {}, {}, HeldOutScore{kScoreScale + 1, 0.3}}));
}

}  // namespace
}  // namespace nbspamd::model
