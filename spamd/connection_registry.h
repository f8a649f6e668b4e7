// SpamdConnectionRegistry: a listener's live connections, so that Stop can tell each one to finish,
// and its counters. Shared by the listener and its connections, so either may go first.
#ifndef NBSPAMD_SPAMD_CONNECTION_REGISTRY_H_
#define NBSPAMD_SPAMD_CONNECTION_REGISTRY_H_

#include <atomic>
#include <cstdint>

#include "common/connection_registry.h"

namespace nbspamd::spamd {

class SpamdConnection;

// What a listener has done, for metrics and tests. Each counter only grows.
struct SpamdCounters {
  std::atomic<std::uint64_t> connections{0};       // Accepted.
  std::atomic<std::uint64_t> answered{0};          // Requests answered EX_OK (PONG included).
  std::atomic<std::uint64_t> errors{0};            // Error responses (EX_PROTOCOL and all).
  std::atomic<std::uint64_t> tells_refused{0};     // TELL answered EX_NOPERM.
  std::atomic<std::uint64_t> timeouts{0};          // Requests not read within the deadline.
  std::atomic<std::uint64_t> verdict_timeouts{0};  // Not answered by the backend in time.
  std::atomic<std::uint64_t> handler_exceptions{
      0};  // Exceptions caught at the connection boundary.
};

// The registry of common/connection_registry.h with the listener's counters. Thread-safe.
class SpamdConnectionRegistry : public ConnectionRegistry<SpamdConnection> {
 public:
  SpamdCounters counters;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_CONNECTION_REGISTRY_H_
