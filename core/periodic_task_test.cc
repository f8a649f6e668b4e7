// PeriodicTask: work that throws, whatever it throws (an int here, no std::exception), is noted
// and counted, and the next run comes as usual; the thread never ends the process.
#include "core/periodic_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace nbspamd::core {
namespace {

TEST(PeriodicTaskTest, WorkThatThrowsAnythingIsCountedAndTheNextRunComes) {
  const std::uint64_t before = BackgroundTaskExceptions().load();
  std::atomic<int> runs = 0;
  {
    PeriodicTask task(std::chrono::milliseconds(5), [&] {
      if (runs.fetch_add(1) == 0) throw 42;
      if (runs.load() == 2) throw std::runtime_error("second");
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (runs.load() < 4 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  EXPECT_GE(runs.load(), 4);
  EXPECT_EQ(BackgroundTaskExceptions().load() - before, 2u);
}

}  // namespace
}  // namespace nbspamd::core
