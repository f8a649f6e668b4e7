#include "server/activity_keeper.h"

#include <utility>

#include "common/log.h"
#include "core/activity_file.h"

namespace nbspamd::server {

ActivityKeeper::ActivityKeeper(std::string path, core::SpamFilter& filter,
                               std::chrono::milliseconds interval)
    : path_(std::move(path)), filter_(filter) {
  auto saved = core::ReadActivity(path_);
  if (saved) {
    filter_.RestoreActivity(*saved);
  } else {
    LogWarning("the console's activity starts empty: " + saved.error().message);
  }
  task_.emplace(interval, [this] { Save(); });
}

ActivityKeeper::~ActivityKeeper() {
  task_.reset();
  Save();
}

void ActivityKeeper::Save() {
  std::lock_guard lock(mutex_);
  if (auto written = core::WriteActivity(path_, filter_.Activity().Snapshot()); !written) {
    LogWarning("the console's activity was not saved: " + written.error().message);
  }
}

}  // namespace nbspamd::server
