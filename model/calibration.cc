#include "model/calibration.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace nbspamd::model {
namespace {

constexpr double kBinWidth = (kCalibrationHigh - kCalibrationLow) / kCalibrationBins;

// A pool of adjacent bins in PAV: the sums of its weighted estimates and of its weights.
struct Pool {
  double weighted = 0;
  double weight = 0;
  std::size_t first = 0;  // Index into the non-empty bins.

  [[nodiscard]] double Mean() const { return weighted / weight; }
};

}  // namespace

std::uint32_t CalibrationBin(double score) {
  if (!(score > kCalibrationLow)) return 0;  // Below the range, or NaN.
  if (score >= kCalibrationHigh) return kCalibrationBins - 1;
  const auto bin = static_cast<std::uint32_t>((score - kCalibrationLow) / kBinWidth);
  return std::min(bin, kCalibrationBins - 1);
}

std::optional<FeedbackCell> FeedbackCellOf(const LedgerEntry& entry) {
  if (!entry.held_out || entry.held_out->scale != kScoreScale) return std::nullopt;
  if (!std::isfinite(entry.held_out->score)) return std::nullopt;
  const bool spam = entry.label == "spam";
  if (!spam && entry.label != "ham") return std::nullopt;
  return FeedbackCell{CalibrationBin(entry.held_out->score), spam};
}

std::uint64_t FeedbackHistogram::SpamTotal() const {
  return std::accumulate(spam.begin(), spam.end(), std::uint64_t{0});
}

std::uint64_t FeedbackHistogram::HamTotal() const {
  return std::accumulate(ham.begin(), ham.end(), std::uint64_t{0});
}

std::vector<double> FitCalibration(std::span<const std::uint64_t> spam,
                                   std::span<const std::uint64_t> ham, double prior_strength) {
  assert(spam.size() == ham.size());
  const std::size_t bins = spam.size();
  std::vector<double> fitted(bins, 0.5);
  // 1. The base rate.
  double spam_total = 0, total = 0;
  std::vector<std::size_t> filled;  // The non-empty bins, in score order.
  for (std::size_t b = 0; b < bins; ++b) {
    spam_total += static_cast<double>(spam[b]);
    total += static_cast<double>(spam[b] + ham[b]);
    if (spam[b] + ham[b] > 0) filled.push_back(b);
  }
  if (filled.empty()) return fitted;
  const double base_rate = (spam_total + 1) / (total + 2);

  // 2 and 3. Each non-empty bin with its prior, pooled while a pool's mean exceeds the next one's.
  std::vector<Pool> pools;
  for (std::size_t i = 0; i < filled.size(); ++i) {
    const std::size_t b = filled[i];
    Pool pool{static_cast<double>(spam[b]) + prior_strength * base_rate,
              static_cast<double>(spam[b] + ham[b]) + prior_strength, i};
    while (!pools.empty() && pools.back().Mean() > pool.Mean()) {
      pool.weighted += pools.back().weighted;
      pool.weight += pools.back().weight;
      pool.first = pools.back().first;
      pools.pop_back();
    }
    pools.push_back(pool);
  }
  std::vector<double> value(filled.size());
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const std::size_t end = p + 1 < pools.size() ? pools[p + 1].first : filled.size();
    std::fill(value.begin() + static_cast<std::ptrdiff_t>(pools[p].first),
              value.begin() + static_cast<std::ptrdiff_t>(end), pools[p].Mean());
  }

  // 4. Every bin: its own value, or the line between its non-empty neighbours.
  for (std::size_t b = 0; b < bins; ++b) {
    const auto next = std::lower_bound(filled.begin(), filled.end(), b);
    if (next == filled.begin()) {
      fitted[b] = value.front();
    } else if (next == filled.end()) {
      fitted[b] = value.back();
    } else if (*next == b) {
      fitted[b] = value[static_cast<std::size_t>(next - filled.begin())];
    } else {
      const std::size_t right = static_cast<std::size_t>(next - filled.begin());
      const std::size_t left = right - 1;
      const double t =
          static_cast<double>(b - filled[left]) / static_cast<double>(filled[right] - filled[left]);
      fitted[b] = value[left] + t * (value[right] - value[left]);
    }
  }
  return fitted;
}

Calibration::Calibration(FeedbackHistogram histogram) : histogram_(std::move(histogram)) {
  assert(histogram_.layout == CalibrationLayout{});
  fitted_ = FitCalibration(histogram_.spam, histogram_.ham, kCalibrationPriorStrength);
  ready_ = histogram_.SpamTotal() >= kMinFeedbackPerClass &&
           histogram_.HamTotal() >= kMinFeedbackPerClass;
}

std::optional<double> Calibration::SpamConfidence(double score) const {
  if (!ready_ || !std::isfinite(score)) return std::nullopt;
  // Position in bin widths from the first bin's centre.
  const double x = (score - kCalibrationLow) / kBinWidth - 0.5;
  if (x <= 0) return fitted_.front();
  if (x >= static_cast<double>(kCalibrationBins - 1)) return fitted_.back();
  const auto left = static_cast<std::size_t>(x);
  const double t = x - static_cast<double>(left);
  return fitted_[left] + t * (fitted_[left + 1] - fitted_[left]);
}

}  // namespace nbspamd::model
