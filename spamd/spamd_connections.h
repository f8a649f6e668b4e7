// SpamdConnections: a listener's live sessions, so that Stop can tell each one to finish, and
// its counters. Shared by the listener and its sessions, so either may go first.
#ifndef NBSPAMD_SPAMD_SPAMD_CONNECTIONS_H_
#define NBSPAMD_SPAMD_SPAMD_CONNECTIONS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace nbspamd::spamd {

class SpamdSession;

// What a listener has done, for metrics and tests. Each counter only grows.
struct SpamdCounters {
  std::atomic<std::uint64_t> connections{0};         // Accepted.
  std::atomic<std::uint64_t> answered{0};            // Requests answered EX_OK (PONG included).
  std::atomic<std::uint64_t> errors{0};              // Error responses (EX_PROTOCOL and all).
  std::atomic<std::uint64_t> tells_refused{0};       // TELL answered EX_NOPERM.
  std::atomic<std::uint64_t> timeouts{0};            // Requests not read within the deadline.
  std::atomic<std::uint64_t> handler_exceptions{0};  // Exceptions caught at the session boundary.
};

// Thread-safe.
class SpamdConnections {
 public:
  // Records a session. False once shutdown has begun: the caller closes the connection.
  [[nodiscard]] bool Add(const SpamdSession* key, std::weak_ptr<SpamdSession> session);
  // Forgets a session; after shutdown began, the last one to go calls the drained callback.
  void Remove(const SpamdSession* key);
  // Tells every session to finish and close; `drained` runs once, on the thread of the last
  // session to go (or here, when none is left).
  void BeginShutdown(std::function<void()> drained);
  // The sessions alive now.
  [[nodiscard]] std::size_t Count();

  SpamdCounters counters;

 private:
  std::mutex mutex_;
  std::unordered_map<const SpamdSession*, std::weak_ptr<SpamdSession>> sessions_;
  bool shutting_down_ = false;
  std::function<void()> drained_;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_SPAMD_CONNECTIONS_H_
