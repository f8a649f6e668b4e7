#include "model/calibration.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace nbspamd::model {
namespace {

constexpr double kBinWidth = (kCalibrationHigh - kCalibrationLow) / kCalibrationBins;

// The logistic function, kept strictly between 0 and 1 in double precision.
double Logistic(double z) { return 1.0 / (1.0 + std::exp(-std::clamp(z, -30.0, 30.0))); }

// The negative log-likelihood of P(spam | x) = Logistic(a·x + b) against the targets, each point
// x = b (the bin index) with n_spam at target t1 and n_ham at target t0.
double Loss(std::span<const std::uint64_t> spam, std::span<const std::uint64_t> ham, double t1,
            double t0, double a, double b) {
  double loss = 0;
  for (std::size_t x = 0; x < spam.size(); ++x) {
    const double n = static_cast<double>(spam[x] + ham[x]);
    if (n == 0) continue;
    const double t = (static_cast<double>(spam[x]) * t1 + static_cast<double>(ham[x]) * t0) / n;
    const double z = a * static_cast<double>(x) + b;
    // -[t log p + (1 - t) log(1 - p)] for p = Logistic(z), without cancellation.
    loss +=
        n * (z >= 0 ? (1 - t) * z + std::log1p(std::exp(-z)) : -t * z + std::log1p(std::exp(z)));
  }
  return loss;
}

}  // namespace

std::uint32_t CalibrationBin(double score) {
  if (!(score > kCalibrationLow)) return 0;  // Below the range, or NaN.
  if (score >= kCalibrationHigh) return kCalibrationBins - 1;
  const auto bin = static_cast<std::uint32_t>((score - kCalibrationLow) / kBinWidth);
  return std::min(bin, kCalibrationBins - 1);
}

std::optional<FeedbackCell> FeedbackCellOf(const LedgerEntry& entry) {
  if (!entry.held_out || entry.held_out->scale != kScoreScale) return std::nullopt;
  // The daemon's own verdict is no feedback: it would only confirm the calibration.
  if (entry.origin.source == kAutolearnSource) return std::nullopt;
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
                                   std::span<const std::uint64_t> ham) {
  assert(spam.size() == ham.size());
  const std::size_t bins = spam.size();
  double spam_total = 0, ham_total = 0;
  std::size_t filled = 0;
  for (std::size_t x = 0; x < bins; ++x) {
    spam_total += static_cast<double>(spam[x]);
    ham_total += static_cast<double>(ham[x]);
    if (spam[x] + ham[x] > 0) ++filled;
  }
  if (filled == 0) return std::vector<double>(bins, 0.5);
  // 1. Platt's targets.
  const double t1 = (spam_total + 1) / (spam_total + 2);
  const double t0 = 1 / (ham_total + 2);
  // The log-odds of the mean target: the best b when a = 0.
  const double flat =
      std::log((spam_total * t1 + ham_total * t0) / (spam_total * (1 - t1) + ham_total * (1 - t0)));
  double a = 0;
  double b = flat;
  // 2. Newton's method with a backtracking line search (Lin, Lin and Weng's version of Platt's
  //    fit). With one non-empty bin the slope is not identified: it stays 0, the start above
  //    (the mean target) is the answer.
  if (filled >= 2) {
    double loss = Loss(spam, ham, t1, t0, a, b);
    for (int iteration = 0; iteration < 100; ++iteration) {
      double g_a = 0, g_b = 0, h_aa = 1e-12, h_ab = 0, h_bb = 1e-12;
      for (std::size_t x = 0; x < bins; ++x) {
        const double n = static_cast<double>(spam[x] + ham[x]);
        if (n == 0) continue;
        const double xd = static_cast<double>(x);
        const double t = (static_cast<double>(spam[x]) * t1 + static_cast<double>(ham[x]) * t0) / n;
        const double p = Logistic(a * xd + b);
        const double d = n * (p - t), w = n * p * (1 - p);
        g_a += d * xd;
        g_b += d;
        h_aa += w * xd * xd;
        h_ab += w * xd;
        h_bb += w;
      }
      // Converged: the gradient is at the rounding level of sums over `total` scores.
      const double tolerance = 1e-12 * (spam_total + ham_total) * static_cast<double>(bins);
      if (std::fabs(g_a) <= tolerance && std::fabs(g_b) <= tolerance) break;
      const double det = h_aa * h_bb - h_ab * h_ab;
      const double step_a = -(h_bb * g_a - h_ab * g_b) / det;
      const double step_b = -(h_aa * g_b - h_ab * g_a) / det;
      const double descent = g_a * step_a + g_b * step_b;
      double size = 1;
      for (; size >= 1e-10; size /= 2) {
        const double next = Loss(spam, ham, t1, t0, a + size * step_a, b + size * step_b);
        if (next < loss + 1e-4 * size * descent) {
          a += size * step_a;
          b += size * step_b;
          loss = next;
          break;
        }
      }
      if (size < 1e-10) break;  // No step improves: at the minimum to double precision.
    }
  }
  // 3. Never decreasing in the score: where the best slope is negative (spam scored lower than
  //    ham), the best non-negative one is 0 (the loss is convex), with the mean target.
  if (a < 0) {
    a = 0;
    b = flat;
  }
  // 4. Each bin's value at its index.
  std::vector<double> fitted(bins);
  for (std::size_t x = 0; x < bins; ++x) fitted[x] = Logistic(a * static_cast<double>(x) + b);
  return fitted;
}

Calibration::Calibration(FeedbackHistogram histogram) : histogram_(std::move(histogram)) {
  assert(histogram_.layout == CalibrationLayout{});
  fitted_ = FitCalibration(histogram_.spam, histogram_.ham);
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
