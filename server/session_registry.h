// SessionRegistry: the live connections, so that shutdown can tell each one to finish, and the
// count of those a handler exception ended.
#ifndef NBSPAMD_SERVER_SESSION_REGISTRY_H_
#define NBSPAMD_SERVER_SESSION_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace nbspamd::server {

class HttpSession;

// Thread-safe.
class SessionRegistry {
 public:
  // Records a session. False once shutdown has begun: the caller closes the connection.
  [[nodiscard]] bool Add(const HttpSession* key, std::weak_ptr<HttpSession> session);
  // Forgets a session; after shutdown began, the last one to go calls the drained callback.
  void Remove(const HttpSession* key);
  // Tells every session to finish its request and close; `drained` runs (once, on the thread
  // of the last session to go, or here if none is left) when none is left.
  void BeginShutdown(std::function<void()> drained);

 private:
  std::mutex mutex_;
  std::unordered_map<const HttpSession*, std::weak_ptr<HttpSession>> sessions_;
  bool shutting_down_ = false;
  std::function<void()> drained_;
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SESSION_REGISTRY_H_
