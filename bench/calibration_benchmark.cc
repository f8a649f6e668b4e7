// The calibration benchmark: what fitting spam_confidence (model/calibration.h) costs. The daemon
// fits the newest records' feedback histogram again on every training write that changes it
// (core::RecentFeedback), so the fit is part of /train's cost, never of /classify's.
//
//   calibration_benchmark [--benchmark_repetitions=5 ...]
//
// BM_FitCalibration/N: one fit of a 100-bin histogram of N held-out scores, shaped like the
// daemon's on the corpora of docs/ACCURACY.md (ham piled up below -1, spam above 1, a thin
// overlap in the middle). BM_SpamConfidence: one lookup, as /classify does.
// BM_ThresholdsFromFeedback: the verdict thresholds from the newest 1,000 hams' and spams'
// held-out scores (model/feedback_thresholds.h), also computed at every training write;
// BM_SortBothWindows: sorting those two windows, which that computation did until it selected.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/calibration.h"
#include "model/feedback_thresholds.h"

namespace {

nbspamd::model::FeedbackHistogram Histogram(std::uint64_t scores) {
  nbspamd::model::FeedbackHistogram histogram;
  const auto bins = static_cast<int>(nbspamd::model::kCalibrationBins);
  for (int b = 0; b < bins; ++b) {
    const double centre = nbspamd::model::kCalibrationLow + (b + 0.5) * 4.0 / bins;
    // Two bell shapes a third apart of the range, with long tails into each other.
    const double ham = std::exp(-0.5 * std::pow((centre + 1.4) / 0.5, 2)) + 0.002;
    const double spam = std::exp(-0.5 * std::pow((centre - 1.5) / 0.6, 2)) + 0.002;
    histogram.ham[b] = static_cast<std::uint64_t>(ham * static_cast<double>(scores) / 25);
    histogram.spam[b] = static_cast<std::uint64_t>(spam * static_cast<double>(scores) / 25);
  }
  return histogram;
}

void BM_FitCalibration(benchmark::State& state) {
  const auto histogram = Histogram(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    nbspamd::model::Calibration calibration(histogram);
    benchmark::DoNotOptimize(calibration.fitted().data());
  }
}
BENCHMARK(BM_FitCalibration)->Arg(100)->Arg(10000)->Arg(1000000);

void BM_SpamConfidence(benchmark::State& state) {
  const nbspamd::model::Calibration calibration(Histogram(10000));
  double score = -2.5;
  for (auto _ : state) {
    benchmark::DoNotOptimize(calibration.SpamConfidence(score));
    score = score > 2.5 ? -2.5 : score + 0.013;
  }
}
BENCHMARK(BM_SpamConfidence);

// 1,000 ham and 1,000 spam scores in arrival order, drawn as the histogram above is shaped.
std::vector<double> Scores(double mean, double sd, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> score(mean, sd);
  std::vector<double> scores(nbspamd::model::kFeedbackWindow);
  for (double& s : scores) s = score(random);
  return scores;
}

void BM_ThresholdsFromFeedback(benchmark::State& state) {
  const std::vector<double> hams = Scores(-1.4, 0.5, 1), spams = Scores(1.5, 0.6, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        nbspamd::model::ThresholdsFromFeedback(hams, spams, {.spam = 0.9, .ham = -0.6}));
  }
}
BENCHMARK(BM_ThresholdsFromFeedback);

void BM_SortBothWindows(benchmark::State& state) {
  const std::vector<double> hams = Scores(-1.4, 0.5, 1), spams = Scores(1.5, 0.6, 2);
  for (auto _ : state) {
    std::vector<double> a = hams, b = spams;
    std::ranges::sort(a);
    std::ranges::sort(b);
    benchmark::DoNotOptimize(a.data());
    benchmark::DoNotOptimize(b.data());
  }
}
BENCHMARK(BM_SortBothWindows);

}  // namespace

BENCHMARK_MAIN();
