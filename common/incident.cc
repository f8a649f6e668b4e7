#include "common/incident.h"

namespace nbspamd {

std::string_view IncidentKindName(IncidentKind kind) {
  switch (kind) {
    case IncidentKind::kProtocolError:
      return "protocol_error";
    case IncidentKind::kTimeout:
      return "timeout";
    case IncidentKind::kBackendError:
      return "backend_error";
    case IncidentKind::kAcceptFailed:
      return "accept_failed";
  }
  return "unknown";
}

void ReportIncident(const IncidentHook& hook, const Incident& incident) noexcept {
  if (!hook) return;
  try {
    hook(incident);
  } catch (...) {
  }
}

}  // namespace nbspamd
