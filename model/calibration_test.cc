// Golden tests of the calibration fit (Platt scaling), each computed by hand in its comment.
#include "model/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace nbspamd::model {
namespace {

void ExpectFitted(const std::vector<double>& fitted, const std::vector<double>& expected) {
  ASSERT_EQ(fitted.size(), expected.size());
  for (std::size_t b = 0; b < expected.size(); ++b) {
    EXPECT_NEAR(fitted[b], expected[b], 1e-9) << "bin " << b;
  }
}

// Two non-empty bins: the maximum-likelihood curve passes through both bins' mean targets.
//   spam = {1, 0, 0, 3}, ham = {3, 0, 0, 1}: S = H = 4, t1 = 5/6, t0 = 1/6.
//   Bin 0: (1 · 5/6 + 3 · 1/6) / 4 = 1/3, log-odds -ln 2 = b.
//   Bin 3: (3 · 5/6 + 1 · 1/6) / 4 = 2/3, log-odds ln 2 = 3a + b, so a = 2 ln 2 / 3.
//   Bin 1: a + b = -ln 2 / 3, P = 1 / (1 + 2^(1/3)).
//   Bin 2: 2a + b = ln 2 / 3, P = 1 / (1 + 2^(-1/3)).
TEST(CalibrationGoldenTest, TwoBinsTheCurvePassesThroughBoth) {
  const std::vector<std::uint64_t> spam{1, 0, 0, 3}, ham{3, 0, 0, 1};
  ExpectFitted(FitCalibration(spam, ham),
               {1.0 / 3, 1 / (1 + std::cbrt(2.0)), 1 / (1 + 1 / std::cbrt(2.0)), 2.0 / 3});
}

// One non-empty bin: no slope, every bin the mean target. spam = {0, 2, 0}, ham = {0, 1, 0}:
// t1 = 3/4, t0 = 1/3, (2 · 3/4 + 1/3) / 3 = 11/18. No counts at all: 1/2.
TEST(CalibrationGoldenTest, OneBinGivesTheMeanTargetAndNothingAHalf) {
  const std::vector<std::uint64_t> spam{0, 2, 0}, ham{0, 1, 0};
  ExpectFitted(FitCalibration(spam, ham), {11.0 / 18, 11.0 / 18, 11.0 / 18});
  const std::vector<std::uint64_t> none{0, 0};
  ExpectFitted(FitCalibration(none, none), {0.5, 0.5});
}

// Spam scored below ham: the best slope is negative, so the best never-decreasing curve is flat
// at the mean target. spam = {3, 0}, ham = {0, 1}: t1 = 4/5, t0 = 1/3, (3 · 4/5 + 1/3) / 4 = 41/60.
TEST(CalibrationGoldenTest, SpamBelowHamGivesAFlatCurve) {
  const std::vector<std::uint64_t> spam{3, 0}, ham{0, 1};
  ExpectFitted(FitCalibration(spam, ham), {41.0 / 60, 41.0 / 60});
}

// More bins than parameters: the fit solves the two likelihood equations
//   sum_x n_x (P_x - t_x) = 0 and sum_x n_x x (P_x - t_x) = 0,
// t_x the bin's mean target, which have one solution (the log-likelihood is strictly concave).
TEST(CalibrationGoldenTest, SolvesTheLikelihoodEquations) {
  const std::vector<std::uint64_t> spam{0, 1, 3, 5}, ham{4, 2, 1, 0};
  const std::vector<double> fitted = FitCalibration(spam, ham);
  const double t1 = 10.0 / 11, t0 = 1.0 / 9;  // S = 9, H = 7
  double level = 0, slope = 0;
  for (std::size_t x = 0; x < 4; ++x) {
    const double n = static_cast<double>(spam[x] + ham[x]);
    const double t = (static_cast<double>(spam[x]) * t1 + static_cast<double>(ham[x]) * t0) / n;
    level += n * (fitted[x] - t);
    slope += n * static_cast<double>(x) * (fitted[x] - t);
    if (x > 0) {
      EXPECT_GT(fitted[x], fitted[x - 1]);
    }
  }
  EXPECT_NEAR(level, 0, 1e-9);
  EXPECT_NEAR(slope, 0, 1e-9);
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

// 30 ham scores in bin 20 (centre -1.18), 30 spam in bin 80 (centre 1.22): t1 = 31/32,
// t0 = 1/32, so the curve passes through 1/32 at bin 20 and 31/32 at bin 80: log-odds
// a·x + b with a = ln 31 / 30, b = -(5/3) ln 31, 0 at bin 50. Between bin centres the confidence
// is the line between the two bins' values; beyond the first and last centre, their value.
TEST(CalibrationTest, SpamConfidenceInterpolatesBetweenBinCentres) {
  FeedbackHistogram histogram;
  histogram.ham[20] = 30;
  histogram.spam[80] = 30;
  const Calibration calibration(histogram);
  ASSERT_TRUE(calibration.ready());
  const auto at = [](double exponent) { return 1 / (1 + std::pow(31.0, exponent)); };
  EXPECT_NEAR(*calibration.SpamConfidence(-1.18), 1.0 / 32, 1e-9);
  EXPECT_NEAR(*calibration.SpamConfidence(1.22), 31.0 / 32, 1e-9);
  EXPECT_NEAR(*calibration.SpamConfidence(0.02), 0.5, 1e-9);          // bin 50
  EXPECT_NEAR(*calibration.SpamConfidence(-0.58), at(0.5), 1e-9);     // bin 35
  EXPECT_NEAR(*calibration.SpamConfidence(-5.0), at(5.0 / 3), 1e-9);  // bin 0
  EXPECT_NEAR(*calibration.SpamConfidence(-1.2), (at(31.0 / 30) + 1.0 / 32) / 2, 1e-9);
  EXPECT_NEAR(*calibration.SpamConfidence(3.0), at(-49.0 / 30), 1e-9);  // bin 99
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
