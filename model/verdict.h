// Verdict: the three-way answer to "is this message spam?", like bogofilter's Yes / Unsure / No,
// from two thresholds on the score (ClassifyResult::score):
//
//   score <= ham_threshold                  ham
//   ham_threshold < score <= spam_threshold unsure
//   spam_threshold < score                  spam
//
// The bounds are chosen so that ham_threshold == spam_threshold is exactly the two-way decision
// (spam when score > spam_threshold, else ham) and `unsure` never happens. The spam side agrees
// with the label: the verdict is spam exactly when the label is (ClassifyResult::label_index),
// so with more classes than spam and ham a message whose most probable class is a third one is
// never a spam verdict (it is ham or unsure by its score). Without a score (spam or ham has no
// documents yet) the model has no evidence either way: the verdict is unsure.
//
//   Verdict v = DecideVerdict(result.score, result.label() == kSpamLabel, ham_threshold);
//   std::string_view name = VerdictName(v);  // "spam", "unsure", "ham"
//
// Pure; thread-safe.
#ifndef NBSPAMD_MODEL_VERDICT_H_
#define NBSPAMD_MODEL_VERDICT_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace nbspamd::model {

enum class Verdict {
  kHam,     // score <= ham_threshold (and the label is not spam).
  kUnsure,  // Between the thresholds, or no score.
  kSpam,    // The label is spam: score > spam_threshold.
};
inline constexpr std::size_t kVerdictCount = 3;

// "ham", "unsure" or "spam", as the HTTP API and nbspamc write it.
[[nodiscard]] std::string_view VerdictName(Verdict verdict);

// The verdict for a message with `score` (nullopt: none) whose label is spam or not.
// REQUIRES: ham_threshold <= the spam_threshold that decided the label.
[[nodiscard]] Verdict DecideVerdict(std::optional<double> score, bool label_is_spam,
                                    double ham_threshold);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_VERDICT_H_
