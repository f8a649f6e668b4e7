// The calibration benchmark: what fitting spam_confidence (model/calibration.h) costs. The daemon
// fits the feedback histogram again on every training write that adds a held-out score, so the
// fit is part of /train's cost, never of /classify's.
//
//   calibration_benchmark [--benchmark_repetitions=5 ...]
//
// BM_FitCalibration/N: one fit of a 100-bin histogram of N held-out scores, shaped like the
// daemon's on the corpora of docs/ACCURACY.md (ham piled up below -1, spam above 1, a thin
// overlap in the middle). BM_SpamConfidence: one lookup, as /classify does.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>

#include "model/calibration.h"

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

}  // namespace

BENCHMARK_MAIN();
