// Verdict: the three-way answer to "is this message spam?", like bogofilter's Yes / Unsure / No,
// from two thresholds on the score (ClassifyResult::score):
//
//   score <= ham_threshold                  ham
//   ham_threshold < score <= spam_threshold unsure
//   spam_threshold < score                  spam
//
// The bounds are chosen so that ham_threshold == spam_threshold is exactly the two-way decision
// (spam when score > spam_threshold, else ham) and `unsure` never happens. The verdict comes
// from the score alone, not from the label (the most probable class, whose posterior saturates
// for any long message); but with more classes than spam and ham a message whose most probable
// class is a third one is never a spam verdict (it is ham or unsure by its score). Without a
// score (spam or ham has no documents yet) the model has no evidence either way: unsure.
//
//   Verdict v = DecideVerdict(result.score, {.spam = 1.0, .ham = -0.6}, /*third_class=*/false);
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
  kHam,     // score <= ham_threshold.
  kUnsure,  // Between the thresholds, or no score.
  kSpam,    // score > spam_threshold (and the most probable class is spam or ham).
};

// REQUIRES: ham <= spam.
struct VerdictThresholds {
  double spam = 0.0;
  double ham = 0.0;

  friend bool operator==(const VerdictThresholds&, const VerdictThresholds&) = default;
};
inline constexpr std::size_t kVerdictCount = 3;

// "ham", "unsure" or "spam", as the HTTP API and nbspamc write it.
[[nodiscard]] std::string_view VerdictName(Verdict verdict);

// The verdict for a message with `score` (nullopt: none); third_class when its most probable
// class is neither spam nor ham.
[[nodiscard]] Verdict DecideVerdict(std::optional<double> score, VerdictThresholds thresholds,
                                    bool third_class);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_VERDICT_H_
