// FrontEndVerdict: the three-way verdict as the milter and spamd front ends receive it from their
// backend seam (they may not depend on model/, where model::Verdict is the core's own), and its
// name. One type for both, so that the adapters (server/) map the core's verdict in one place.
#ifndef NBSPAMD_COMMON_FRONT_END_VERDICT_H_
#define NBSPAMD_COMMON_FRONT_END_VERDICT_H_

#include <string_view>

namespace nbspamd {

enum class FrontEndVerdict { kHam, kUnsure, kSpam };

// "ham", "unsure", "spam".
[[nodiscard]] constexpr std::string_view FrontEndVerdictName(FrontEndVerdict verdict) {
  switch (verdict) {
    case FrontEndVerdict::kHam:
      return "ham";
    case FrontEndVerdict::kUnsure:
      return "unsure";
    case FrontEndVerdict::kSpam:
      return "spam";
  }
  return "unsure";
}

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_FRONT_END_VERDICT_H_
