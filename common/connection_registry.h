// ConnectionRegistry<Connection>: a listener's live connections, so that a stop can tell each one
// to finish and know when the last has gone. Every front end (HTTP, milter, spamd) keeps its
// connections in one. `Connection` has `void Shutdown()`: finish what is in flight, then close.
//
//   auto registry = std::make_shared<ConnectionRegistry<MyConnection>>();
//   if (!registry->Add(connection.get(), connection)) return;  // Stopping: not served.
//   ...                                                  // ~MyConnection: registry->Remove(this).
//   registry->BeginShutdown([] { /* the last connection is gone */ });
//
// Thread-safe. Shutdown and the drained callback are called without the registry's lock held, so
// either may Remove or Add.
#ifndef NBSPAMD_COMMON_CONNECTION_REGISTRY_H_
#define NBSPAMD_COMMON_CONNECTION_REGISTRY_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nbspamd {

template <class Connection>
class ConnectionRegistry {
 public:
  // Records a connection. False once shutdown has begun: the caller closes the connection.
  [[nodiscard]] bool Add(const Connection* key, std::weak_ptr<Connection> connection) {
    std::lock_guard lock(mutex_);
    if (shutting_down_) return false;
    connections_.emplace(key, std::move(connection));
    return true;
  }

  // Forgets a connection (one never added is ignored); after shutdown began, the last one to go
  // runs the drained callback.
  void Remove(const Connection* key) {
    std::function<void()> drained;
    {
      std::lock_guard lock(mutex_);
      if (connections_.erase(key) == 0) return;
      if (shutting_down_ && connections_.empty()) drained = std::exchange(drained_, nullptr);
    }
    if (drained) drained();
  }

  // The first call tells every connection to finish and close. `drained` (may be empty) runs
  // once when none is left: on the thread of the last connection to go, or here when none is.
  // A later call only adds its `drained`.
  void BeginShutdown(std::function<void()> drained) {
    std::vector<std::shared_ptr<Connection>> live;
    {
      std::lock_guard lock(mutex_);
      if (!connections_.empty()) {
        if (!shutting_down_) {
          for (const auto& [key, weak] : connections_) {
            if (auto connection = weak.lock()) live.push_back(std::move(connection));
          }
        }
        drained_ = [first = std::move(drained_), then = std::move(drained)] {
          if (first) first();
          if (then) then();
        };
        drained = nullptr;
      }
      shutting_down_ = true;
    }
    for (const auto& connection : live) connection->Shutdown();
    // Dropping `live` may destroy a connection that ended meanwhile: its Remove takes the lock.
    live.clear();
    if (drained) drained();
  }

  // The connections alive now.
  [[nodiscard]] std::size_t Count() const {
    std::lock_guard lock(mutex_);
    return connections_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections_;
  bool shutting_down_ = false;
  std::function<void()> drained_;
};

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_CONNECTION_REGISTRY_H_
