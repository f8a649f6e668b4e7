// ThresholdOutcomes: what a pair of verdict thresholds would have done to the held-out feedback.
// No I/O.
//
//   HeldOutWindow window{.hams = {...}, .spams = {...}};   // held-out scores, any order
//   SortedHeldOut held_out(window);
//   ThresholdOutcome o = held_out.OutcomeOf({.spam = 1.0, .ham = -0.6});
//   // o.ham.spam: hams the pair calls spam; o.spam.ham: spams it calls ham (missed) ...
//
// Each held-out score is given the verdict model/verdict.h gives a message with that score:
//
//   score <= ham threshold                  ham
//   ham threshold < score <= spam threshold unsure
//   spam threshold < score                  spam
//
// so "ham called spam" is a ham whose score is above the spam threshold (strictly), "spam missed"
// a spam whose score is at or below the ham threshold, and "unsure" a score in between. A
// held-out score is always a score (the message was scored with spam and ham both learned); a
// message that gave no evidence (no token scored) has score 0 there, and is counted by that 0,
// where /classify would say unsure whatever the thresholds: the rates are exact for every other
// message.
//
// Pure; a SortedHeldOut is immutable once built and may be read from any number of threads.
#ifndef NBSPAMD_MODEL_THRESHOLD_OUTCOMES_H_
#define NBSPAMD_MODEL_THRESHOLD_OUTCOMES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "model/verdict.h"

namespace nbspamd::model {

// Held-out scores of the mail fed back, by true class (core/recent_feedback.h publishes the
// newest kFeedbackWindow of each). Any order.
struct HeldOutWindow {
  std::vector<double> hams;
  std::vector<double> spams;
};

// The verdicts a pair gives the held-out scores of one true class.
struct VerdictCounts {
  std::uint64_t total = 0;
  std::uint64_t spam = 0;    // score > spam threshold.
  std::uint64_t unsure = 0;  // ham threshold < score <= spam threshold.
  std::uint64_t ham = 0;     // score <= ham threshold.

  // count / total; nullopt when total is 0.
  [[nodiscard]] std::optional<double> Rate(std::uint64_t count) const {
    if (total == 0) return std::nullopt;
    return static_cast<double>(count) / static_cast<double>(total);
  }

  friend bool operator==(const VerdictCounts&, const VerdictCounts&) = default;
};

struct ThresholdOutcome {
  VerdictThresholds thresholds;
  VerdictCounts ham;   // The true hams: .spam are hams called spam.
  VerdictCounts spam;  // The true spams: .ham are spams missed (called ham).

  friend bool operator==(const ThresholdOutcome&, const ThresholdOutcome&) = default;
};

// One point of the single-threshold curves, from which any pair's counts follow:
// hams called spam by (s, h) = hams_above(s); spams missed = spams_at_or_below(h);
// unsure hams = hams_above(h) − hams_above(s); unsure spams = spams_at_or_below(s) −
// spams_at_or_below(h).
struct ThresholdPoint {
  double threshold = 0;
  std::uint64_t hams_above = 0;         // Ham scores > threshold.
  std::uint64_t spams_at_or_below = 0;  // Spam scores <= threshold.

  friend bool operator==(const ThresholdPoint&, const ThresholdPoint&) = default;
};

class SortedHeldOut {
 public:
  // Keeps the finite scores of `window`, sorted.
  explicit SortedHeldOut(const HeldOutWindow& window);

  [[nodiscard]] std::uint64_t hams() const { return hams_.size(); }
  [[nodiscard]] std::uint64_t spams() const { return spams_.size(); }

  // The verdicts `thresholds` gives every held-out score. REQUIRES: thresholds.ham <= .spam.
  [[nodiscard]] ThresholdOutcome OutcomeOf(VerdictThresholds thresholds) const;

  // The curve at `low`, low + step, ... up to `high` (within step / 1000, so that a decimal
  // step's rounding does not lose the last point). REQUIRES: step > 0, low <= high.
  [[nodiscard]] std::vector<ThresholdPoint> Curve(double low, double high, double step) const;

 private:
  std::vector<double> hams_;
  std::vector<double> spams_;
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_THRESHOLD_OUTCOMES_H_
