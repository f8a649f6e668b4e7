// RocksdbStore::RetireLedger (docs/STORAGE.md "Ledger retention").
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "model/calibration.h"
#include "model/learning.h"
#include "storage/model_check.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/token_bags.h"

namespace nbspamd::storage {
namespace {

using test_support::BagOfWords;

constexpr char kAllWords[] = "cheap pills now meeting notes friday watches";

void LearnAt(Store& store, const std::string& id, const std::string& label, const std::string& text,
             const std::string& source, std::int64_t learned_at) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats(), {source, learned_at},
                       model::HeldOutScore{model::kScoreScale, 0.5});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

TEST(LedgerRetentionStoreTest, StepsTakeSourcesInOrderOldestFirstAndChangeNoCount) {
  TempDir dir;
  auto opened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  RocksdbStore& store = **opened;
  LearnAt(store, "d4", "ham", "meeting notes friday", "", 400);
  LearnAt(store, "d2", "ham", "meeting notes", "a", 200);
  LearnAt(store, "d1", "spam", "cheap pills now", "a", 100);
  LearnAt(store, "d3", "spam", "cheap watches now", "b", 300);
  const model::ModelStats stats = *store.Stats();
  const model::Snapshot before = store.Read(BagOfWords(kAllWords).entries);
  const model::FeedbackHistogram histogram = store.Calibration()->histogram();

  // Source "" has nothing before 301; "a" gives d1 then d2, the step's two; "b"'s d3 is left.
  auto step = store.RetireLedger(301, 2, "7-1");
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->retired, 2u);
  EXPECT_TRUE(step->more);
  EXPECT_TRUE((*store.FindLearned("d1"))->retired);
  EXPECT_TRUE((*store.FindLearned("d2"))->retired);
  EXPECT_FALSE((*store.FindLearned("d3"))->retired);
  EXPECT_EQ(store.StreamPosition(), "7-1");
  step = store.RetireLedger(301, 2);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->retired, 1u);
  EXPECT_FALSE(step->more);
  EXPECT_EQ(store.RetireLedger(301, 2)->retired, 0u);

  // The record keeps what it was, without its tokens; the index no longer lists it.
  const model::LedgerEntry d1 = **store.FindLearned("d1");
  EXPECT_EQ(d1.label, "spam");
  EXPECT_TRUE(d1.tokens.empty());
  EXPECT_EQ(d1.origin, (model::LearnOrigin{"a", 100}));
  EXPECT_TRUE(d1.held_out.has_value());
  EXPECT_TRUE(store.ListLearned("a", 0, std::numeric_limits<std::int64_t>::max(), 10)->empty());
  EXPECT_EQ(store.ListLearned("", 0, std::numeric_limits<std::int64_t>::max(), 10)->size(), 1u);

  // Nothing a score reads changed.
  EXPECT_EQ(*store.Stats(), stats);
  EXPECT_EQ(store.Read(BagOfWords(kAllWords).entries).counts, before.counts);
  EXPECT_EQ(store.Calibration()->histogram(), histogram);

  opened->reset();
  auto report = CheckModel(dir.Join("model"));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->ledger_records, 4u);
  // A repair rebuilds the same model from the live records and the base counts.
  auto repaired = RepairModel(dir.Join("model"));
  ASSERT_TRUE(repaired.has_value()) << repaired.error().message;
  EXPECT_TRUE(repaired->ok());
  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value());
  EXPECT_EQ(*(*reopened)->Stats(), stats);
  EXPECT_EQ((*reopened)->Read(BagOfWords(kAllWords).entries).counts, before.counts);
}

}  // namespace
}  // namespace nbspamd::storage
