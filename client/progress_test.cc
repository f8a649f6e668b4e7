#include "client/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

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

TEST(ProgressTest, ADisplayNotOnATerminalPrintsPlainLines) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    ProgressDisplay display(
        out, false,
        [] {
          ProgressSnapshot snapshot;
          snapshot.done = 3;
          return snapshot;
        },
        std::chrono::milliseconds(10));
    display.Start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    display.Stop();
  }
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_TRUE(printed.starts_with("3 done, 0 msg/s\n")) << printed;
  EXPECT_EQ(printed.find('\r'), std::string::npos);
}

TEST(ProgressTest, ADisplayOnATerminalRedrawsInPlaceAndClearsTheLine) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  {
    ProgressDisplay display(out, true, [] {
      ProgressSnapshot snapshot;
      snapshot.done = 3;
      return snapshot;
    });
    display.Start();
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    display.Stop();
  }
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_TRUE(printed.starts_with("\r3 done, 0 msg/s")) << printed;
  EXPECT_EQ(printed.find('\n'), std::string::npos);
  EXPECT_TRUE(printed.ends_with("\r")) << printed;
  // At most ten redraws a second.
  EXPECT_LE(std::count(printed.begin(), printed.end(), '\r'), 6);
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
