// StoreWatch: brings a store's writes back by itself after a fault of the machine (a full disk,
// an I/O error, a read-only remount). Every `interval` it reads Store::Health and, while writes
// are stopped, calls Store::Recover once. It logs once when writes stop and once when they
// resume, with how long they were stopped.
//
//   StoreWatch watch(store, std::chrono::seconds(1));  // until destroyed
//
// Thread safety: owns one thread (a PeriodicTask), which the destructor stops (waiting for a
// Recover under way).
// The store must outlive the watch.
#ifndef NBSPAMD_CORE_STORE_WATCH_H_
#define NBSPAMD_CORE_STORE_WATCH_H_

#include <chrono>

#include "core/periodic_task.h"
#include "storage/store.h"

namespace nbspamd::core {

class StoreWatch {
 public:
  // REQUIRES: interval > 0.
  StoreWatch(storage::Store& store, std::chrono::milliseconds interval);

 private:
  // One look at the store's health, on the task's thread.
  void Check();

  storage::Store& store_;
  bool writable_ = true;  // As of the last check; only the task's thread touches these two.
  std::chrono::steady_clock::time_point stopped_at_;
  PeriodicTask task_;  // Last: starts once the rest is built.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_STORE_WATCH_H_
