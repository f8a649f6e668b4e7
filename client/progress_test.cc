#include "client/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "client/bulk_tally.h"

namespace nbspamd::client {
namespace {

TEST(ProgressTest, FormatDurationUsesMinutesAndHoursWhenNeeded) {
  EXPECT_EQ(FormatDuration(0), "0:00");
  EXPECT_EQ(FormatDuration(7.4), "0:07");
  EXPECT_EQ(FormatDuration(754), "12:34");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "?");
}

TEST(ProgressTest, FormatRateKeepsThreeDigits) {
  EXPECT_EQ(FormatRate(0), "0 msg/s");
  EXPECT_EQ(FormatRate(0.5), "0.5 msg/s");
  EXPECT_EQ(FormatRate(12.345), "12.3 msg/s");
  EXPECT_EQ(FormatRate(456.4), "456 msg/s");
  EXPECT_EQ(FormatRate(12345.6), "12346 msg/s");
}

TEST(ProgressTest, EtaComesFromTheShareOfBytesDone) {
  ProgressSnapshot snapshot;
  snapshot.done = 100;
  snapshot.elapsed_seconds = 10;
  snapshot.done_bytes = 250;
  EXPECT_EQ(EtaSeconds(snapshot), std::nullopt);  // Total unknown.
  snapshot.total_bytes = 1000;
  EXPECT_DOUBLE_EQ(*EtaSeconds(snapshot), 30);
  snapshot.done_bytes = 1000;
  EXPECT_DOUBLE_EQ(*EtaSeconds(snapshot), 0);
}

TEST(ProgressTest, FormatProgressShowsWhatIsKnown) {
  ProgressSnapshot snapshot;
  snapshot.done = 1234;
  snapshot.elapsed_seconds = 2;
  snapshot.done_bytes = 450;
  EXPECT_EQ(FormatProgress(snapshot), "1234 done, 617 msg/s");
  snapshot.failed = 2;
  snapshot.total_bytes = 1000;
  EXPECT_EQ(FormatProgress(snapshot), "1234 done (2 failed), 617 msg/s, 45%, ETA 0:02");
}

// A sampler that notes when the display samples, so that a test waits for draws instead of
// hoping that some happened within a while.
class Samples {
 public:
  ProgressDisplay::Sampler Sampler() {
    return [this] {
      {
        std::lock_guard lock(mutex_);
        times_.push_back(std::chrono::steady_clock::now());
      }
      sampled_.notify_all();
      ProgressSnapshot snapshot;
      snapshot.done = 3;
      return snapshot;
    };
  }
  // Waits (at most 10 s) until the display has sampled `count` times.
  bool WaitFor(std::size_t count) {
    std::unique_lock lock(mutex_);
    return sampled_.wait_for(lock, std::chrono::seconds(10),
                             [&] { return times_.size() >= count; });
  }
  std::vector<std::chrono::steady_clock::time_point> Times() {
    std::lock_guard lock(mutex_);
    return times_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable sampled_;
  std::vector<std::chrono::steady_clock::time_point> times_;
};

TEST(ProgressTest, ADisplayNotOnATerminalPrintsPlainLines) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  Samples samples;
  {
    ProgressDisplay display(out, false, samples.Sampler(), std::chrono::milliseconds(10));
    display.Start();
    ASSERT_TRUE(samples.WaitFor(2));
    display.Stop();  // Each draw is done under the display's lock: once stopped, all are printed.
  }
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_TRUE(printed.starts_with("3 done, 0 msg/s\n3 done, 0 msg/s\n")) << printed;
  EXPECT_EQ(printed.find('\r'), std::string::npos);
  EXPECT_EQ(static_cast<std::size_t>(std::count(printed.begin(), printed.end(), '\n')),
            samples.Times().size());
}

TEST(ProgressTest, ADisplayOnATerminalRedrawsInPlaceAndClearsTheLine) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  Samples samples;
  {
    ProgressDisplay display(out, true, samples.Sampler());
    display.Start();
    ASSERT_TRUE(samples.WaitFor(3));
    display.Stop();
  }
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_TRUE(printed.starts_with("\r3 done, 0 msg/s")) << printed;
  EXPECT_EQ(printed.find('\n'), std::string::npos);
  EXPECT_TRUE(printed.ends_with("\r")) << printed;
  // One '\r' per redraw, two for the final clearing.
  const std::vector<std::chrono::steady_clock::time_point> times = samples.Times();
  EXPECT_EQ(static_cast<std::size_t>(std::count(printed.begin(), printed.end(), '\r')),
            times.size() + 2);
  // At most ten redraws a second: each waits out 100 ms after the one before, however fast or
  // slow the machine.
  for (std::size_t i = 1; i < times.size(); ++i) {
    EXPECT_GE(times[i] - times[i - 1], std::chrono::milliseconds(100)) << i;
  }
}

}  // namespace
}  // namespace nbspamd::client

namespace nbspamd::client {
namespace {

TEST(BulkTallyTest, SummaryCountsEachOutcomeAndQueuedOnlyWhenThereAreAny) {
  BulkTally tally;
  tally.Record(Outcome::kLearned, 10);
  tally.Record(Outcome::kLearned, 10);
  tally.Record(Outcome::kUnchanged, 10);
  tally.Record(Outcome::kFailed, 10, "a.eml", "too large");
  EXPECT_EQ(FormatSummary(tally, /*forget=*/false, 2.0).substr(0, 61),
            "learned 2, relearned 0, unchanged 1, failed 1: 4 messages in ");
  tally.Record(Outcome::kQueued, 10);
  EXPECT_EQ(FormatSummary(tally, /*forget=*/false, 2.0).substr(0, 71),
            "learned 2, relearned 0, unchanged 1, queued 1, failed 1: 5 messages in ");
  ASSERT_EQ(tally.FirstFailures().size(), 1u);
}

}  // namespace
}  // namespace nbspamd::client
