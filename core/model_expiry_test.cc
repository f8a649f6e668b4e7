#include "core/ledger_retention.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "storage/model_check.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::core {
namespace {

constexpr std::int64_t kDay = 24 * 3600;
constexpr std::chrono::hours kNever(24 * 365);  // An interval no test waits for.

class LedgerRetentionTest : public ::testing::Test {
 protected:
  LedgerRetentionTest() { Open(); }

  void Open() {
    SpamFilterOptions options;
    options.clock = [this] { return now_.load(); };
    auto store = storage::RocksdbStore::Open(dir_.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    filter_ = std::make_unique<SpamFilter>(std::move(*store), options);
  }

  void TrainAt(std::int64_t day, const std::string& id, const std::string& label,
               const std::string& text) {
    now_ = day * kDay;
    auto trained = filter_->Train(text, label, id);
    ASSERT_TRUE(trained.has_value()) << trained.error().message;
  }

  double Score(const std::string& text) {
    auto outcome = filter_->Classify(text, 0);
    EXPECT_TRUE(outcome.has_value());
    return outcome ? outcome->result.log_odds.value_or(0) : 0;
  }

  TempDir dir_;
  std::atomic<std::int64_t> now_{0};
  std::unique_ptr<SpamFilter> filter_;
};

TEST_F(LedgerRetentionTest, RetiresOnlyOldRecordsAndNoScoreOrCountChanges) {
  TrainAt(10, "s1", "spam", "cheap pills buy now cheap");
  TrainAt(20, "h1", "ham", "meeting notes for the project");
  TrainAt(30, "s2", "spam", "buy cheap watches now");
  TrainAt(90, "h2", "ham", "project meeting moved to friday");
  const model::ModelStats stats = *filter_->Stats();
  const auto histogram = filter_->Calibration()->histogram();
  const double spammy = Score("buy cheap pills");
  const double hammy = Score("project meeting on friday");

  LedgerRetentionSweep sweep(*filter_, std::chrono::days(60), kNever);
  now_ = 100 * kDay;  // s1, h1 and s2 are older than 60 days; h2 is not.
  auto retired = sweep.SweepOnce();
  ASSERT_TRUE(retired.has_value()) << retired.error().message;
  EXPECT_EQ(*retired, 3u);
  EXPECT_EQ(filter_->RetiredRecords(), 3u);
  EXPECT_EQ(*filter_->Stats(), stats);
  EXPECT_EQ(filter_->Calibration()->histogram(), histogram);
  EXPECT_EQ(Score("buy cheap pills"), spammy);
  EXPECT_EQ(Score("project meeting on friday"), hammy);
  EXPECT_EQ(*sweep.SweepOnce(), 0u);  // Nothing older is left.

  // A retired message can be neither forgotten nor moved to the other class: 410's error.
  auto forgotten = filter_->ForgetId("s1");
  ASSERT_FALSE(forgotten.has_value());
  EXPECT_EQ(forgotten.error().code, ErrorCode::kExpired);
  EXPECT_NE(forgotten.error().message.find("1970-01-11T00:00:00Z"), std::string::npos)
      << forgotten.error().message;
  auto relabelled = filter_->Train("cheap pills buy now cheap", "ham", "s1");
  ASSERT_FALSE(relabelled.has_value());
  EXPECT_EQ(relabelled.error().code, ErrorCode::kExpired);
  // Learning it again as what it is changes nothing, as for any record.
  auto again = filter_->Train("cheap pills buy now cheap", "spam", "s1");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->status, model::LearnStatus::kUnchanged);
  // A record inside the retention is forgotten exactly.
  ASSERT_TRUE(filter_->ForgetId("h2").has_value());
  EXPECT_EQ(filter_->Stats()->TotalDocuments(), 3u);

  const double after_forget = Score("buy cheap pills");

  // Every invariant of nbspamd check holds, counting the retired records in the base counts.
  filter_.reset();
  auto report = storage::CheckModel(dir_.Join("model"));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->ledger_records, 3u);
  EXPECT_GT(report->base_records, 0u);

  // And the model reads the same after a restart.
  Open();
  EXPECT_EQ(Score("buy cheap pills"), after_forget);
  EXPECT_EQ(filter_->ForgetId("s2").error().code, ErrorCode::kExpired);
}

TEST_F(LedgerRetentionTest, ItsThreadRetiresEveryIntervalAndStopsWithIt) {
  TrainAt(1, "old", "spam", "an old message");
  now_ = 400 * kDay;
  {
    LedgerRetentionSweep sweep(*filter_, std::chrono::days(30), std::chrono::milliseconds(10));
    for (int i = 0; i < 500 && filter_->RetiredRecords() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_EQ(filter_->RetiredRecords(), 1u);
  EXPECT_EQ(filter_->ForgetId("old").error().code, ErrorCode::kExpired);
}

}  // namespace
}  // namespace nbspamd::core
