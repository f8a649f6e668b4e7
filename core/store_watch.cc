#include "core/store_watch.h"

#include <cstdio>
#include <string>

#include "common/log.h"

namespace nbspamd::core {

StoreWatch::StoreWatch(storage::Store& store, std::chrono::milliseconds interval)
    : store_(store), task_(interval, [this] { Check(); }) {}

void StoreWatch::Check() {
  storage::WriteHealth health = store_.Health();
  if (!health.writable) {
    if (writable_) {
      writable_ = false;
      stopped_at_ = std::chrono::steady_clock::now();
      LogError("training paused: " + health.reason,
               {{"fault", storage::WriteFaultName(health.fault)}});
    }
    if (store_.Recover()) health = store_.Health();
  }
  if (health.writable && !writable_) {
    writable_ = true;
    const std::chrono::duration<double> stopped = std::chrono::steady_clock::now() - stopped_at_;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", stopped.count());
    LogInfo(std::string("training resumed: the data folder takes writes again after ") + seconds +
            " s");
  }
}

}  // namespace nbspamd::core
