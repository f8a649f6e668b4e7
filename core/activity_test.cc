#include "core/activity.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace nbspamd::core {
namespace {

using std::chrono::microseconds;

class ActivityWindowTest : public ::testing::Test {
 protected:
  std::atomic<std::int64_t> now_ms{1'795'699'980'000};  // A minute's start (divisible by 60,000).
  ActivityWindow activity{[this] { return now_ms.load(); }};
};

TEST_F(ActivityWindowTest, CountsTheCurrentMinuteByVerdict) {
  activity.RecordClassify(model::Verdict::kSpam, microseconds(900));
  activity.RecordClassify(model::Verdict::kSpam, microseconds(1100));
  activity.RecordClassify(model::Verdict::kHam, microseconds(1500));
  activity.RecordClassify(model::Verdict::kUnsure, microseconds(100));
  activity.RecordClassify(std::nullopt, microseconds(100));
  activity.RecordTrain(true, microseconds(3000));
  activity.RecordTrain(false, microseconds(10));
  const auto hour = activity.LastHour();
  ASSERT_EQ(hour.size(), ActivityWindow::kMinutes);
  const ActivityMinute& now = hour.back();
  EXPECT_EQ(now.start_ms, now_ms.load());
  EXPECT_EQ(now.spam, 2u);
  EXPECT_EQ(now.ham, 1u);
  EXPECT_EQ(now.unsure, 1u);
  EXPECT_EQ(now.unscored, 1u);
  EXPECT_EQ(now.classified(), 5u);
  EXPECT_EQ(now.trained, 1u);
  EXPECT_EQ(now.train_failed, 1u);
  // Latencies 100, 100, 900, 1100, 1500 µs: the median (900) is in [512, 1024) µs, reported as
  // its upper bound; the 99th percentile (1500) in [1024, 2048).
  EXPECT_DOUBLE_EQ(now.classify_p50_ms, 1.024);
  EXPECT_DOUBLE_EQ(now.classify_p99_ms, 2.048);
  EXPECT_DOUBLE_EQ(now.train_p99_ms, 4.096);
  EXPECT_EQ(hour.front().start_ms, now_ms.load() - 59 * 60'000);
  EXPECT_EQ(hour.front().classified(), 0u);
}

TEST_F(ActivityWindowTest, AMinuteMovesBackAndAnHourLaterItIsGone) {
  activity.RecordClassify(model::Verdict::kSpam, microseconds(1));
  now_ms += 60'000;
  activity.RecordClassify(model::Verdict::kHam, microseconds(1));
  auto hour = activity.LastHour();
  EXPECT_EQ(hour[58].spam, 1u);
  EXPECT_EQ(hour[59].ham, 1u);
  EXPECT_EQ(hour[59].spam, 0u);
  // 59 minutes on, the first minute is the oldest row; a minute later it has left the window,
  // and the slot it used holds the new minute's counts only.
  now_ms += 58 * 60'000;
  hour = activity.LastHour();
  EXPECT_EQ(hour.front().spam, 1u);
  now_ms += 60'000;
  EXPECT_EQ(activity.LastHour().front().spam, 0u);
  activity.RecordClassify(model::Verdict::kUnsure, microseconds(1));
  hour = activity.LastHour();
  EXPECT_EQ(hour.back().spam, 0u);
  EXPECT_EQ(hour.back().unsure, 1u);
}

TEST_F(ActivityWindowTest, ThreadsRecordingAtOnceLoseNothingWithinAMinute) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < 10'000; ++i)
        activity.RecordClassify(model::Verdict::kHam, microseconds(i));
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(activity.LastHour().back().ham, 40'000u);
}

}  // namespace
}  // namespace nbspamd::core
