// Incident: what a front end handled without telling a client all of it, for the daemon's log.
// Every front end (HTTP, milter, spamd) reports these through one IncidentHook that the daemon
// sets (server/incident_log.h) and tests replace:
//
//   options.on_incident = [](const Incident& incident) { ... };  // Thread-safe, never blocks.
//   ReportIncident(options.on_incident, {"spamd", IncidentKind::kTimeout, "CHECK"});
//
// Exceptions are not incidents: wherever a front end catches one (common/handler_guard.h), it is
// noted by NoteHandlerException, counted and logged the same way for all of them.
#ifndef NBSPAMD_COMMON_INCIDENT_H_
#define NBSPAMD_COMMON_INCIDENT_H_

#include <functional>
#include <string_view>

namespace nbspamd {

enum class IncidentKind {
  kProtocolError,  // The client broke the protocol; its connection was closed.
  kTimeout,        // The client was silent, or left our answer unread, too long; closed.
  kBackendError,   // The core failed a request; the client got only a status code.
  kAcceptFailed,   // Accepting a connection failed (out of file descriptors and the like).
};

// "protocol_error", "timeout", "backend_error", "accept_failed".
[[nodiscard]] std::string_view IncidentKindName(IncidentKind kind);

struct Incident {
  std::string_view front_end;  // "http", "milter", "spamd".
  IncidentKind kind;
  std::string_view detail;  // For the log: what happened, never the bytes of a message.
};

// Called on I/O threads, for many connections at once: it must be thread-safe and must not
// block. Unset: incidents are only counted (each front end's counters).
using IncidentHook = std::function<void(const Incident& incident)>;

// Calls `hook` when it is set; swallows whatever it throws (the hook is the log: there is
// nowhere left to report its failure). Never throws.
void ReportIncident(const IncidentHook& hook, const Incident& incident) noexcept;

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_INCIDENT_H_
