#include "core/store_watch.h"

#include <cstdio>
#include <string>

#include "common/log.h"

namespace nbspamd::core {

StoreWatch::StoreWatch(storage::Store& store, std::chrono::milliseconds interval)
    : store_(store), interval_(interval), thread_([this] { Run(); }) {}

StoreWatch::~StoreWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StoreWatch::Run() {
  bool writable = true;
  auto stopped_at = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    storage::WriteHealth health = store_.Health();
    if (!health.writable) {
      if (writable) {
        writable = false;
        stopped_at = std::chrono::steady_clock::now();
        LogError("training paused: " + health.reason,
                 {{"fault", storage::WriteFaultName(health.fault)}});
      }
      if (store_.Recover()) health = store_.Health();
    }
    if (health.writable && !writable) {
      writable = true;
      const std::chrono::duration<double> stopped = std::chrono::steady_clock::now() - stopped_at;
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", stopped.count());
      LogInfo(std::string("training resumed: the data folder takes writes again after ") + seconds +
              " s");
    }
    lock.lock();
  }
}

}  // namespace nbspamd::core
