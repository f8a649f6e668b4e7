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
  activity.RecordTrain(TrainResult::kDone, microseconds(3000));
  activity.RecordTrain(TrainResult::kFailed, microseconds(10));
  activity.RecordTrain(TrainResult::kRejected, microseconds(10));
  activity.RecordTrain(TrainResult::kRejected, microseconds(10));
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
  EXPECT_EQ(now.train_rejected, 2u);
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

TEST_F(ActivityWindowTest, TheDayHasFiveMinuteRowsAndTheMonthHourRows) {
  // now_ms is a minute's start; move it to an hour's start, then record at +0, +4, +5 and +61
  // minutes.
  now_ms = now_ms.load() / 3'600'000 * 3'600'000;
  const std::int64_t hour_start = now_ms.load();
  for (int minutes : {0, 4, 5, 61}) {
    now_ms = hour_start + minutes * 60'000;
    activity.RecordClassify(model::Verdict::kSpam, microseconds(100));
  }
  activity.RecordTrain(TrainResult::kDone, microseconds(100));
  const auto day = activity.Rows(ActivityRange::kDay);
  ASSERT_EQ(day.size(), 288u);
  EXPECT_EQ(day.back().start_ms, hour_start + 60 * 60'000);  // The 5 minutes holding +61.
  EXPECT_EQ(day.back().spam, 1u);
  EXPECT_EQ(day.back().trained, 1u);
  EXPECT_EQ(day[day.size() - 1 - 12].spam, 2u);  // +0 and +4: the hour's first 5 minutes.
  EXPECT_EQ(day[day.size() - 1 - 11].spam, 1u);  // +5.
  const auto month = activity.Rows(ActivityRange::kMonth);
  ASSERT_EQ(month.size(), 720u);
  EXPECT_EQ(month.back().start_ms, hour_start + 3'600'000);
  EXPECT_EQ(month.back().spam, 1u);
  EXPECT_EQ(month[718].spam, 3u);
  EXPECT_EQ(month.front().start_ms, hour_start + 3'600'000 - 719LL * 3'600'000);
  // 30 days on, the first hour has left the month.
  now_ms = hour_start + 720LL * 3'600'000;
  EXPECT_EQ(activity.Rows(ActivityRange::kMonth).front().spam, 1u);
  now_ms += 3'600'000;
  EXPECT_EQ(activity.Rows(ActivityRange::kMonth).front().spam, 0u);
}

TEST_F(ActivityWindowTest, ASnapshotRestoredInANewWindowGivesTheSameRows) {
  activity.RecordClassify(model::Verdict::kHam, microseconds(700));
  activity.RecordTrain(TrainResult::kRejected, microseconds(50));
  now_ms += 7 * 60'000;
  activity.RecordClassify(model::Verdict::kSpam, microseconds(90'000));
  const auto saved = activity.Snapshot();
  // Three ranges; the hour has two periods with events.
  EXPECT_GE(saved.size(), 4u);

  ActivityWindow restored{[this] { return now_ms.load(); }};
  restored.Restore(saved);
  for (ActivityRange range : {ActivityRange::kHour, ActivityRange::kDay, ActivityRange::kMonth}) {
    const auto want = activity.Rows(range);
    const auto got = restored.Rows(range);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].classified(), want[i].classified()) << i;
      EXPECT_EQ(got[i].train_rejected, want[i].train_rejected) << i;
      EXPECT_EQ(got[i].classify_p99_ms, want[i].classify_p99_ms) << i;
    }
  }
  EXPECT_EQ(restored.Snapshot(), saved);
  // A snapshot two hours old: the hour's periods have left it, the day's and month's have not.
  now_ms += 2 * 3'600'000;
  ActivityWindow later{[this] { return now_ms.load(); }};
  later.Restore(saved);
  EXPECT_EQ(later.LastHour().back().classified(), 0u);
  std::uint64_t day = 0;
  for (const ActivityRow& row : later.Rows(ActivityRange::kDay)) day += row.classified();
  EXPECT_EQ(day, 2u);
}

}  // namespace
}  // namespace nbspamd::core
