#include "http_api/session_registry.h"

#include <vector>

#include "http_api/http_session.h"

namespace nbspamd::http_api {

bool SessionRegistry::Add(const HttpSession* key, std::weak_ptr<HttpSession> session) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) return false;
  sessions_.emplace(key, std::move(session));
  return true;
}

void SessionRegistry::Remove(const HttpSession* key) {
  std::function<void()> drained;
  {
    std::lock_guard lock(mutex_);
    if (sessions_.erase(key) == 0) return;
    if (shutting_down_ && sessions_.empty()) drained = std::move(drained_);
  }
  if (drained) drained();
}

void SessionRegistry::BeginShutdown(std::function<void()> drained) {
  std::vector<std::shared_ptr<HttpSession>> live;
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_) return;
    shutting_down_ = true;
    for (const auto& [key, session] : sessions_) {
      if (auto alive = session.lock()) live.push_back(std::move(alive));
    }
    if (sessions_.empty()) {
      drained_ = nullptr;
    } else {
      drained_ = std::move(drained);
      drained = nullptr;
    }
  }
  for (const auto& session : live) session->Shutdown();
  if (drained) drained();
}

}  // namespace nbspamd::http_api
