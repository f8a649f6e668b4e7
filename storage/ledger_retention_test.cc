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

// d1 (source "a", time 100), d2 ("a", 200), d3 ("b", 300) and d4 ("", 400).
void LearnFourRecords(Store& store) {
  LearnAt(store, "d4", "ham", "meeting notes friday", "", 400);
  LearnAt(store, "d2", "ham", "meeting notes", "a", 200);
  LearnAt(store, "d1", "spam", "cheap pills now", "a", 100);
  LearnAt(store, "d3", "spam", "cheap watches now", "b", 300);
}

TEST(LedgerRetentionStoreTest, StepsTakeSourcesInOrderOldestFirstAndChangeNoCount) {
  TempDir dir;
  auto opened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  RocksdbStore& store = **opened;
  LearnFourRecords(store);
  const model::ModelStats stats = *store.Stats();
  const model::Snapshot before = store.Read(BagOfWords(kAllWords).entries);
  const model::FeedbackHistogram histogram = *store.Feedback();

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
  EXPECT_EQ(*store.Feedback(), histogram);

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

// The starts RetireStepStarts gives are where the steps of a pass begin: a step from each, of
// that many records, retires exactly them, and the pass retires what one whole pass would.
TEST(LedgerRetentionStoreTest, StepStartsCutAPassIntoStepsOfTheirSize) {
  TempDir dir;
  auto opened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  RocksdbStore& store = **opened;
  LearnFourRecords(store);
  LearnAt(store, "d5", "spam", "cheap watches", "b", 500);
  EXPECT_EQ(store.RetireStepStarts(301, 0, false).error().code, ErrorCode::kInvalidArgument);
  // d1, d2 (source "a") and d3 ("b") are older than 301: steps of 1 start at "", d2's and d3's.
  auto starts = store.RetireStepStarts(301, 1, false);
  ASSERT_TRUE(starts.has_value()) << starts.error().message;
  ASSERT_EQ(starts->size(), 2u);
  EXPECT_EQ(*store.RetireStepStarts(301, 2, false), std::vector<std::string>{(*starts)[1]});
  EXPECT_TRUE(store.RetireStepStarts(301, 3, false)->empty());
  EXPECT_EQ(*store.RetireStepStarts(301, 1, false, 1), std::vector<std::string>{starts->front()});
  EXPECT_TRUE(store.RetireStepStarts(301, 1, true)->empty());  // No user has a ledger.
  starts->insert(starts->begin(), "");
  const char* const retired_by[] = {"d1", "d2", "d3"};
  for (std::size_t i = 0; i < starts->size(); ++i) {
    auto step = store.RetireLedger(301, 1, "", (*starts)[i]);
    ASSERT_TRUE(step.has_value()) << step.error().message;
    EXPECT_EQ(step->retired, 1u) << i;
    EXPECT_TRUE((*store.FindLearned(retired_by[i]))->retired) << i;
  }
  EXPECT_FALSE((*store.FindLearned("d4"))->retired);
  EXPECT_FALSE((*store.FindLearned("d5"))->retired);
  EXPECT_EQ(store.RetireLedger(301, 0)->retired, 0u);
  EXPECT_TRUE(store.RetireStepStarts(301, 1, false)->empty());
}

// NthNewestLearned counts the live records of every source by time, and no retired one.
TEST(LedgerRetentionStoreTest, TheNthNewestLiveRecordOverAllSources) {
  TempDir dir;
  auto opened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  RocksdbStore& store = **opened;
  EXPECT_EQ(*store.NthNewestLearned(1), std::nullopt);  // An empty ledger.
  LearnFourRecords(store);  // Times 100 and 200 ("a"), 300 ("b"), 400 ("").
  EXPECT_EQ(*store.NthNewestLearned(1), 400);
  EXPECT_EQ(*store.NthNewestLearned(2), 300);
  EXPECT_EQ(*store.NthNewestLearned(3), 200);
  EXPECT_EQ(*store.NthNewestLearned(4), 100);
  EXPECT_EQ(*store.NthNewestLearned(5), std::nullopt);
  EXPECT_EQ(store.NthNewestLearned(0).error().code, ErrorCode::kInvalidArgument);
  ASSERT_EQ(store.RetireLedger(301, 0)->retired, 3u);  // d1, d2, d3.
  EXPECT_EQ(*store.NthNewestLearned(1), 400);
  EXPECT_EQ(*store.NthNewestLearned(2), std::nullopt);
}

// The sum of the counts of `words`' tokens, class by class, and the model's |V|.
std::uint64_t CountOf(const Store& store, const std::string& word) {
  const model::Snapshot snapshot = store.Read(BagOfWords(word).entries);
  std::uint64_t total = 0;
  for (const std::uint64_t count : snapshot.counts) total += count;
  return total;
}

class TokenExpiryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = RocksdbStore::Open(dir_.Join("model"));
    ASSERT_TRUE(opened.has_value()) << opened.error().message;
    store_ = std::move(*opened);
    // Old: "rare" once (day 1), "twice" in two old messages, "pills" in an old and a live one.
    LearnAt(*store_, "o1", "spam", "cheap pills rare twice", "", 1 * 86400);
    LearnAt(*store_, "o2", "spam", "cheap twice", "", 2 * 86400);
    LearnAt(*store_, "o3", "ham", "meeting notes", "", 3 * 86400);
    LearnAt(*store_, "live", "spam", "pills fresh", "", 50 * 86400);
    auto step = store_->RetireLedger(10 * 86400, 100);
    ASSERT_TRUE(step.has_value()) << step.error().message;
    ASSERT_EQ(step->retired, 3u);
  }

  void ExpectConsistent() {
    store_.reset();
    auto report = CheckModel(dir_.Join("model"));
    ASSERT_TRUE(report.has_value()) << report.error().message;
    EXPECT_TRUE(report->ok()) << report->problems.front();
    auto opened = RocksdbStore::Open(dir_.Join("model"));
    ASSERT_TRUE(opened.has_value()) << opened.error().message;
    store_ = std::move(*opened);
  }

  TempDir dir_;
  std::unique_ptr<RocksdbStore> store_;
};

TEST_F(TokenExpiryStoreTest, DropsOnlyRareOldTokensNoLiveRecordHoldsAndStaysExact) {
  const model::ModelStats before = *store_->Stats();
  // Rare (counted once) and last seen before day 5: "rare", "meeting", "notes". "pills" is held
  // by the live record, "fresh" too; "cheap" and "twice" are counted twice.
  auto step = store_->ExpireTokens({.seen_before = 5 * 86400, .max_count = 1}, 0, 1000);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->dropped, 3u);
  EXPECT_FALSE(step->next.has_value());
  const model::ModelStats& after = *store_->Stats();
  EXPECT_EQ(after.vocabulary_size, before.vocabulary_size - 3);
  EXPECT_EQ(after.classes[0].tokens, before.classes[0].tokens - 1);    // spam: "rare".
  EXPECT_EQ(after.classes[1].tokens, before.classes[1].tokens - 2);    // ham: "meeting notes".
  EXPECT_EQ(after.classes[0].documents, before.classes[0].documents);  // Documents stay.
  for (const char* gone : {"rare", "meeting", "notes"}) EXPECT_EQ(CountOf(*store_, gone), 0u);
  for (const char* kept : {"cheap", "twice", "pills", "fresh"})
    EXPECT_GT(CountOf(*store_, kept), 0u);
  ExpectConsistent();

  // Forgetting the live record afterwards removes exactly what it added.
  auto learned = store_->FindLearned("live");
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  ASSERT_TRUE(store_->Apply(model::PlanForget("live", **learned, *store_->Stats())).has_value());
  EXPECT_EQ(CountOf(*store_, "fresh"), 0u);
  EXPECT_EQ(CountOf(*store_, "pills"), 1u);  // The old record's, now a base count.
  ExpectConsistent();
  // With nothing live any more, "pills" expires too once its age comes.
  EXPECT_EQ(store_->ExpireTokens({.seen_before = 5 * 86400, .max_count = 1}, 0, 1000)->dropped, 1u);
  ExpectConsistent();
}

TEST_F(TokenExpiryStoreTest, StepsResumeWhereTheyStoppedAndDropWhatOneStepWould) {
  std::uint64_t dropped = 0;
  std::optional<TokenHash> from = 0;
  int steps = 0;
  while (from) {
    auto step = store_->ExpireTokens({.seen_before = 100 * 86400}, *from, 2);
    ASSERT_TRUE(step.has_value()) << step.error().message;
    EXPECT_LE(step->examined, 2u);
    dropped += step->dropped;
    from = step->next;
    ++steps;
  }
  EXPECT_GT(steps, 2);
  // Every token with only base counts: all but "pills" and "fresh".
  EXPECT_EQ(dropped, 5u);
  EXPECT_EQ(store_->Stats()->vocabulary_size, 2u);
  ExpectConsistent();
}

TEST_F(TokenExpiryStoreTest, AWeightyTokenIsKeptAndCandidatesAreCountedByDay) {
  // n_spam = 8, n_ham = 2, |V| = 7, alpha 1: "meeting" and "notes" (once in ham) weigh
  // |log((0+1)/15) - log((1+1)/9)| = 1.20; "cheap" and "twice" (twice in spam) 0.59; "rare"
  // (once in spam) 0.18.
  auto candidates = store_->FindExpiryCandidates({.keep_weight = 1.0});
  ASSERT_TRUE(candidates.has_value()) << candidates.error().message;
  // Last seen: "rare" day 1; "twice" and "cheap" day 2.
  EXPECT_EQ(*candidates, (ExpiryCandidates{{1, 1}, {2, 2}}));
  auto step = store_->ExpireTokens({.seen_before = 100 * 86400, .keep_weight = 1.0}, 0, 1000);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->dropped, 3u);
  EXPECT_GT(CountOf(*store_, "meeting"), 0u);
  EXPECT_GT(CountOf(*store_, "notes"), 0u);
  EXPECT_EQ(CountOf(*store_, "cheap"), 0u);
  ExpectConsistent();
}

TEST_F(TokenExpiryStoreTest, KeepHamKeepsEveryTokenCountedInHamByAgeAndForTheCap) {
  // Droppable (all base counts): "rare", "cheap", "twice" (spam only), "meeting", "notes" (ham).
  auto candidates = store_->FindExpiryCandidates({.keep_ham = true});
  ASSERT_TRUE(candidates.has_value()) << candidates.error().message;
  EXPECT_EQ(*candidates, (ExpiryCandidates{{1, 1}, {2, 2}}));  // Day 3's ham words are not.
  auto step = store_->ExpireTokens({.seen_before = 5 * 86400, .keep_ham = true}, 0, 1000);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->dropped, 3u);
  for (const char* gone : {"rare", "cheap", "twice"}) EXPECT_EQ(CountOf(*store_, gone), 0u);
  for (const char* kept : {"meeting", "notes", "pills", "fresh"})
    EXPECT_GT(CountOf(*store_, kept), 0u);
  ExpectConsistent();
}

}  // namespace
}  // namespace nbspamd::storage
