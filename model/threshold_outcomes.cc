#include "model/threshold_outcomes.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace nbspamd::model {
namespace {

std::vector<double> SortedFinite(const std::vector<double>& scores) {
  std::vector<double> sorted;
  sorted.reserve(scores.size());
  for (const double score : scores) {
    if (std::isfinite(score)) sorted.push_back(score);
  }
  std::ranges::sort(sorted);
  return sorted;
}

// How many of `sorted` are <= t.
std::uint64_t AtOrBelow(const std::vector<double>& sorted, double t) {
  return static_cast<std::uint64_t>(std::ranges::upper_bound(sorted, t) - sorted.begin());
}

VerdictCounts CountsOf(const std::vector<double>& sorted, VerdictThresholds thresholds) {
  VerdictCounts counts{.total = sorted.size()};
  counts.ham = AtOrBelow(sorted, thresholds.ham);
  const std::uint64_t not_spam = AtOrBelow(sorted, thresholds.spam);
  counts.unsure = not_spam - counts.ham;
  counts.spam = counts.total - not_spam;
  return counts;
}

}  // namespace

SortedHeldOut::SortedHeldOut(const HeldOutWindow& window)
    : hams_(SortedFinite(window.hams)), spams_(SortedFinite(window.spams)) {}

ThresholdOutcome SortedHeldOut::OutcomeOf(VerdictThresholds thresholds) const {
  assert(thresholds.ham <= thresholds.spam);
  return {.thresholds = thresholds,
          .ham = CountsOf(hams_, thresholds),
          .spam = CountsOf(spams_, thresholds)};
}

std::vector<ThresholdPoint> SortedHeldOut::Curve(double low, double high, double step) const {
  assert(step > 0 && low <= high);
  std::vector<ThresholdPoint> curve;
  for (std::size_t i = 0;; ++i) {
    const double t = low + step * static_cast<double>(i);
    if (t > high + step / 1000) break;
    curve.push_back({.threshold = t,
                     .hams_above = hams_.size() - AtOrBelow(hams_, t),
                     .spams_at_or_below = AtOrBelow(spams_, t)});
  }
  return curve;
}

}  // namespace nbspamd::model
