#include "model/feedback_thresholds.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace nbspamd::model {
namespace {

// The finite scores among the first kFeedbackWindow of `scores`, in their order. Only the
// highest ham and one order statistic of the spams are needed: they are selected (linear), not
// sorted, since this runs at every training write (core::RecentFeedback::Publish).
std::vector<double> Window(std::span<const double> scores) {
  std::vector<double> window;
  window.reserve(std::min(scores.size(), kFeedbackWindow));
  for (const double score : scores.first(std::min(scores.size(), kFeedbackWindow))) {
    if (std::isfinite(score)) window.push_back(score);
  }
  return window;
}

}  // namespace

FeedbackThresholds ThresholdsFromFeedback(std::span<const double> ham_scores,
                                          std::span<const double> spam_scores,
                                          VerdictThresholds configured) {
  assert(configured.ham <= configured.spam);
  const std::vector<double> hams = Window(ham_scores);
  std::vector<double> spams = Window(spam_scores);
  FeedbackThresholds out{.thresholds = configured, .hams = hams.size(), .spams = spams.size()};
  if (hams.size() == kFeedbackWindow) {
    const double floor = std::min(kSpamFloor, configured.spam);
    const double highest = *std::ranges::max_element(hams);
    out.thresholds.spam = std::clamp(highest + kSpamMargin, floor, configured.spam);
    out.spam_from_feedback = true;
  }
  out.thresholds.ham = std::min(configured.ham, out.thresholds.spam);
  if (spams.size() == kFeedbackWindow) {
    const auto at = static_cast<std::size_t>(std::floor(kHamQuantile * kFeedbackWindow));
    // The score sorted ascending at index `at`, selected in place.
    std::ranges::nth_element(spams, spams.begin() + static_cast<std::ptrdiff_t>(at));
    // Just below that spam's score, so that it is not called ham itself.
    const double below = std::nextafter(spams[at], -std::numeric_limits<double>::infinity());
    out.thresholds.ham = std::min(std::max(below, configured.ham), out.thresholds.spam);
    out.ham_from_feedback = true;
  }
  return out;
}

}  // namespace nbspamd::model
