// Verdict thresholds from the site's own feedback (docs/CONFIG.md `verdict_thresholds`). No I/O.
//
// The configured thresholds (spam_threshold, ham_threshold) are the widest the unsure band gets;
// the held-out scores of the mail fed back most recently narrow it where that mail shows it is
// safe (rule R of docs/ACCURACY.md, "Verdict thresholds from the site's own feedback"):
//
//   spam threshold = the highest held-out score of the newest kWindow hams + kSpamMargin, kept
//                    within [min(kSpamFloor, configured spam), configured spam];
//   ham threshold  = just below the kHamQuantile quantile of the newest kWindow spams (the score
//                    sorted ascending at index floor(kHamQuantile · kWindow)), kept within
//                    [configured ham, the spam threshold];
//
// each side the configured one until kWindow held-out scores of its class are known. With stable
// mail a new ham scores above the highest of n earlier ones with probability 1/(n + 1): about
// the 0.1% of ham called spam that the verdict is held to, at n = 1,000.
//
//   FeedbackThresholds t = ThresholdsFromFeedback(ham_scores, spam_scores, {.spam = 1.0, .ham =
//   -0.6});
//
// Pure; thread-safe.
#ifndef NBSPAMD_MODEL_FEEDBACK_THRESHOLDS_H_
#define NBSPAMD_MODEL_FEEDBACK_THRESHOLDS_H_

#include <cstddef>
#include <span>

#include "model/verdict.h"

namespace nbspamd::model {

inline constexpr std::size_t kFeedbackWindow = 1000;
inline constexpr double kSpamMargin = 0.1;
inline constexpr double kSpamFloor = 0.25;
inline constexpr double kHamQuantile = 0.01;

// The thresholds in force and what they rest on.
struct FeedbackThresholds {
  VerdictThresholds thresholds;
  bool spam_from_feedback = false;  // The spam threshold comes from the hams' scores.
  bool ham_from_feedback = false;   // The ham threshold comes from the spams' scores.
  std::size_t hams = 0;             // Held-out scores of each class it looked at (<= kWindow).
  std::size_t spams = 0;

  friend bool operator==(const FeedbackThresholds&, const FeedbackThresholds&) = default;
};

// The rule above over the held-out scores of the newest hams and spams fed back (any order; only
// the first kWindow of each span are read, so pass them newest first). Scores that are not
// finite are not counted. REQUIRES: configured.ham <= configured.spam.
[[nodiscard]] FeedbackThresholds ThresholdsFromFeedback(std::span<const double> ham_scores,
                                                        std::span<const double> spam_scores,
                                                        VerdictThresholds configured);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_FEEDBACK_THRESHOLDS_H_
