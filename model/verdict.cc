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

Verdict DecideVerdict(std::optional<double> score, VerdictThresholds thresholds, bool third_class) {
  if (!score) return Verdict::kUnsure;
  if (*score <= thresholds.ham) return Verdict::kHam;
  if (*score > thresholds.spam && !third_class) return Verdict::kSpam;
  return Verdict::kUnsure;
}

}  // namespace nbspamd::model
