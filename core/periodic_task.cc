#include "core/periodic_task.h"

#include <exception>
#include <utility>

#include "common/log.h"

namespace nbspamd::core {

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
    try {
      work_();
    } catch (const std::exception& e) {  // A bug or an allocation failure: the next run may do.
      LogError("a background task failed", {{"what", e.what()}});
    }
    lock.lock();
  }
}

}  // namespace nbspamd::core
