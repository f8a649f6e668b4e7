// SessionRegistry: the live connections, so that shutdown can tell each one to finish, and the
// count of those a handler exception ended.
#ifndef NBSPAMD_HTTP_API_SESSION_REGISTRY_H_
#define NBSPAMD_HTTP_API_SESSION_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace nbspamd::http_api {

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

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_SESSION_REGISTRY_H_
