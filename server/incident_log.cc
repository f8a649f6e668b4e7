#include "server/incident_log.h"

#include <string>

#include "common/log.h"
#include "common/log_throttle.h"

namespace nbspamd::server {
namespace {

LogThrottle& AcceptThrottle(std::string_view front_end) {
  static LogThrottle http, milter, spamd;
  if (front_end == "milter") return milter;
  if (front_end == "spamd") return spamd;
  return http;
}

}  // namespace

void LogIncident(const Incident& incident) noexcept {
  try {
    const std::string kind(IncidentKindName(incident.kind));
    if (incident.kind != IncidentKind::kAcceptFailed) {
      LogDebug("connection incident",
               {{"front_end", incident.front_end}, {"kind", kind}, {"detail", incident.detail}});
      return;
    }
    if (const auto held_back = AcceptThrottle(incident.front_end).Admit()) {
      LogWarning("accept failed", {{"front_end", incident.front_end},
                                   {"detail", incident.detail},
                                   {"suppressed", std::to_string(*held_back)}});
    }
  } catch (...) {
    // Out of memory while logging: the front end's counters still tell.
  }
}

}  // namespace nbspamd::server
