#include "model/verdict.h"

namespace nbspamd::model {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kHam:
      return "ham";
    case Verdict::kUnsure:
      return "unsure";
    case Verdict::kSpam:
      return "spam";
  }
  return "unsure";
}

Verdict DecideVerdict(std::optional<double> score, bool label_is_spam, double ham_threshold) {
  if (!score) return Verdict::kUnsure;
  if (label_is_spam) return Verdict::kSpam;
  return *score <= ham_threshold ? Verdict::kHam : Verdict::kUnsure;
}

}  // namespace nbspamd::model
