// LogIncident: the daemon's IncidentHook (common/incident.h), the one every front end reports
// through. A client's fault (a protocol error, a timeout) and a failed request the client was told
// of by its status (a backend error) are debug lines; a failed accept is a warning, at most one a
// minute per front end with the number held back. Thread-safe; never throws.
#ifndef NBSPAMD_SERVER_INCIDENT_LOG_H_
#define NBSPAMD_SERVER_INCIDENT_LOG_H_

#include "common/incident.h"

namespace nbspamd::server {

void LogIncident(const Incident& incident) noexcept;

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_INCIDENT_LOG_H_
