// ActivityKeeper: carries the console's activity (core/activity.h) over restarts. Made at start,
// before serving, it adds what <data_dir>/activity holds (core/activity_file.h) to the filter's
// window, then writes the window's snapshot there once a minute and once more when it is
// destroyed (after serving stopped). A file that cannot be read or written is logged as a
// warning: the activity is the console's, never a reason not to serve.
//
// Thread safety: its own thread writes; construct and destroy on one thread.
#ifndef NBSPAMD_SERVER_ACTIVITY_KEEPER_H_
#define NBSPAMD_SERVER_ACTIVITY_KEEPER_H_

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "core/periodic_task.h"
#include "core/spam_filter.h"

namespace nbspamd::server {

class ActivityKeeper {
 public:
  // `filter` must outlive this. REQUIRES: nothing is served yet.
  ActivityKeeper(std::string path, core::SpamFilter& filter,
                 std::chrono::milliseconds interval = std::chrono::minutes(1));
  ActivityKeeper(const ActivityKeeper&) = delete;
  ActivityKeeper& operator=(const ActivityKeeper&) = delete;
  ~ActivityKeeper();

  // Writes the snapshot now (the last write, once serving stopped).
  void Save();

 private:
  const std::string path_;
  core::SpamFilter& filter_;
  std::mutex mutex_;  // One write at a time.
  std::optional<core::PeriodicTask> task_;
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_ACTIVITY_KEEPER_H_
