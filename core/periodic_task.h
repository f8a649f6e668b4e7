// PeriodicTask: runs `work` on a thread of its own every `interval` (the first run one interval
// after construction), until destroyed. The background passes of the daemon (idle user layers,
// the ledger retention) are each one.
//
//   PeriodicTask task(std::chrono::hours(1), [&] { sweep.SweepOnce(); });
//
// Thread safety: `work` runs on the task's thread only, never twice at once. The destructor waits
// for a run under way, then stops the thread. An exception `work` throws, of any type, is logged
// (NoteHandlerException) and counted in BackgroundTaskExceptions; the next run comes as usual.
#ifndef NBSPAMD_CORE_PERIODIC_TASK_H_
#define NBSPAMD_CORE_PERIODIC_TASK_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace nbspamd::core {

// Exceptions the work of every PeriodicTask threw since start, for /metrics.
[[nodiscard]] std::atomic<std::uint64_t>& BackgroundTaskExceptions();

class PeriodicTask {
 public:
  // REQUIRES: interval > 0.
  PeriodicTask(std::chrono::milliseconds interval, std::function<void()> work);
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;
  ~PeriodicTask();

 private:
  void Run() noexcept;

  const std::chrono::milliseconds interval_;
  const std::function<void()> work_;
  std::mutex mutex_;  // Guards stopping_.
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // Last: starts once the rest is built.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_PERIODIC_TASK_H_
