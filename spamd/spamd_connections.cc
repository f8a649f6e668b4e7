#include "spamd/spamd_connections.h"

#include <utility>
#include <vector>

#include "spamd/spamd_session.h"

namespace nbspamd::spamd {

bool SpamdConnections::Add(const SpamdSession* key, std::weak_ptr<SpamdSession> session) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) return false;
  sessions_.emplace(key, std::move(session));
  return true;
}

void SpamdConnections::Remove(const SpamdSession* key) {
  std::function<void()> drained;
  {
    std::lock_guard lock(mutex_);
    sessions_.erase(key);
    if (shutting_down_ && sessions_.empty()) drained = std::exchange(drained_, nullptr);
  }
  if (drained) drained();
}

void SpamdConnections::BeginShutdown(std::function<void()> drained) {
  std::vector<std::shared_ptr<SpamdSession>> live;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
    if (sessions_.empty()) {
      // Nothing to wait for.
    } else {
      drained_ = std::move(drained);
      drained = nullptr;
      for (auto& [key, weak] : sessions_) {
        if (auto session = weak.lock()) live.push_back(std::move(session));
      }
    }
  }
  for (auto& session : live) session->Shutdown();
  // Dropping `live` may destroy a session that ended meanwhile: its Remove takes the lock again.
  live.clear();
  if (drained) drained();
}

std::size_t SpamdConnections::Count() {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace nbspamd::spamd
