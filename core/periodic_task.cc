#include "core/periodic_task.h"

#include <exception>
#include <utility>

#include "common/handler_guard.h"
#include "common/log.h"

namespace nbspamd::core {

std::atomic<std::uint64_t>& BackgroundTaskExceptions() {
  static std::atomic<std::uint64_t> count = 0;
  return count;
}

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, std::function<void()> work)
    : interval_(interval), work_(std::move(work)), thread_([this] { Run(); }) {}

PeriodicTask::~PeriodicTask() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PeriodicTask::Run() noexcept {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    // A bug or an allocation failure, whatever it throws: noted, and the next run may do.
    (void)GuardStep("background task", "", BackgroundTaskExceptions(), [this] { work_(); });
    lock.lock();
  }
}

}  // namespace nbspamd::core
