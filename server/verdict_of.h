// The core's verdict (model::Verdict) as the protocol front ends take it (FrontEndVerdict), in one
// place for the milter and spamd adapters.
#ifndef NBSPAMD_SERVER_VERDICT_OF_H_
#define NBSPAMD_SERVER_VERDICT_OF_H_

#include "common/front_end_verdict.h"
#include "model/verdict.h"

namespace nbspamd::server {

[[nodiscard]] constexpr FrontEndVerdict FrontEndVerdictOf(model::Verdict verdict) {
  switch (verdict) {
    case model::Verdict::kHam:
      return FrontEndVerdict::kHam;
    case model::Verdict::kSpam:
      return FrontEndVerdict::kSpam;
    case model::Verdict::kUnsure:
      break;
  }
  return FrontEndVerdict::kUnsure;
}

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_VERDICT_OF_H_
