// MilterCounters: what the milter front end has done since start, for /metrics and tests. One
// instance is shared by every connection of a listener (or of several).
#ifndef NBSPAMD_MILTER_COUNTERS_H_
#define NBSPAMD_MILTER_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace nbspamd::milter {

// Thread-safe: relaxed atomic counters, each read on its own (no snapshot across them).
struct MilterCounters {
  std::atomic<std::uint64_t> connections{0};  // Accepted connections.
  // Connections closed for a protocol error: a malformed, oversized or truncated packet, an
  // unknown command, or a command out of order.
  std::atomic<std::uint64_t> protocol_errors{0};
  std::atomic<std::uint64_t> messages{0};  // Messages that reached end of body.
  std::atomic<std::uint64_t> spam{0};      // Classified, by verdict.
  std::atomic<std::uint64_t> unsure{0};
  std::atomic<std::uint64_t> ham{0};
  std::atomic<std::uint64_t> rejected{0};        // Spam rejected with the configured 5xx reply.
  std::atomic<std::uint64_t> quarantined{0};     // Spam put in the MTA's quarantine (hold queue).
  std::atomic<std::uint64_t> oversized{0};       // Larger than max_body_bytes: accepted unchecked.
  std::atomic<std::uint64_t> backend_errors{0};  // The backend could not answer.
  std::atomic<std::uint64_t> tempfailed{0};      // ... and fail_mode = tempfail said 4xx.
  // Connections closed after read_timeout: the MTA silent, or leaving our replies unread.
  std::atomic<std::uint64_t> timeouts{0};
  // Messages answered by the fail mode because their verdict took longer than verdict_timeout.
  std::atomic<std::uint64_t> verdict_timeouts{0};
  // Exceptions caught at the connection boundary (a bug): that connection was closed.
  std::atomic<std::uint64_t> internal_errors{0};

  static void Add(std::atomic<std::uint64_t>& counter) {
    counter.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_COUNTERS_H_
