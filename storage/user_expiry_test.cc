// RocksdbStore::RetireUserLedgers and RocksdbStore::ExpireUserTokens: the ledger retention and the
// token expiry of user layers (docs/STORAGE.md "Ledger retention", "Token expiry").
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/model_check.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/token_bags.h"

namespace nbspamd::storage {
namespace {

using test_support::BagOfWords;

constexpr std::int64_t kDay = 86400;
constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

void LearnForUserAt(Store& store, const std::string& user, const std::string& id,
                    const std::string& label, const std::string& text, const std::string& source,
                    std::int64_t learned_at) {
  auto learned = store.FindUserLearned(user, id);
  ASSERT_TRUE(learned.has_value()) << learned.error().message;
  model::Delta delta;
  ASSERT_NE(model::AddUserLearn(delta, user, id, label, BagOfWords(text), *learned, *store.Stats(),
                                {source, learned_at}),
            model::LearnStatus::kUnchanged);
  auto applied = store.Apply(delta);
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
}

void LearnGlobalAt(Store& store, const std::string& id, const std::string& label,
                   const std::string& text, std::int64_t learned_at) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats(), {"", learned_at});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

// The sum of `user`'s counts of `word`'s token over every class.
std::uint64_t UserCountOf(const Store& store, const std::string& user, const std::string& word) {
  auto snapshot = store.ReadUser(user, *store.Stats(), BagOfWords(word).entries);
  EXPECT_TRUE(snapshot.has_value());
  if (!snapshot || !*snapshot) return 0;
  std::uint64_t total = 0;
  for (const std::uint64_t count : (*snapshot)->counts) total += count;
  return total;
}

std::uint64_t GlobalCountOf(const Store& store, const std::string& word) {
  std::uint64_t total = 0;
  for (const std::uint64_t count : store.Read(BagOfWords(word).entries).counts) total += count;
  return total;
}

class UserExpiryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    auto opened = RocksdbStore::Open(dir_.Join("model"));
    ASSERT_TRUE(opened.has_value()) << opened.error().message;
    store_ = std::move(*opened);
  }

  // Closes the store, checks the folder, and opens it again.
  void ExpectConsistent() {
    store_.reset();
    auto report = CheckModel(dir_.Join("model"));
    ASSERT_TRUE(report.has_value()) << report.error().message;
    EXPECT_TRUE(report->ok()) << report->problems.front();
    Open();
  }

  model::ModelStats UserStatsOf(const std::string& user) {
    auto stats = store_->UserStats(user);
    EXPECT_TRUE(stats.has_value() && stats->has_value());
    return stats && *stats ? **stats : model::ModelStats{};
  }

  // Alice's u1 ("a", 100), u2 ("a", 200) and u3 ("b", 300), bob's b1 ("", 100) and b2 ("", 500),
  // and the global g1 (100).
  void LearnSixRecords() {
    LearnForUserAt(*store_, "alice", "u2", "ham", "meeting notes", "a", 200);
    LearnForUserAt(*store_, "alice", "u1", "spam", "cheap pills", "a", 100);
    LearnForUserAt(*store_, "alice", "u3", "spam", "cheap watches", "b", 300);
    LearnForUserAt(*store_, "bob", "b1", "spam", "cheap", "", 100);
    LearnForUserAt(*store_, "bob", "b2", "ham", "fresh", "", 500);
    LearnGlobalAt(*store_, "g1", "spam", "cheap pills", 100);
  }

  TempDir dir_;
  std::unique_ptr<RocksdbStore> store_;
};

TEST_F(UserExpiryStoreTest, StepStartsCutAPassOverTheUsersIntoStepsOfTheirSize) {
  LearnSixRecords();
  // u1, u2, u3 and b1 are older than 301: steps of 2 start at "" and at u3's key.
  auto starts = store_->RetireStepStarts(301, 2, true);
  ASSERT_TRUE(starts.has_value()) << starts.error().message;
  ASSERT_EQ(starts->size(), 1u);
  EXPECT_EQ(store_->RetireStepStarts(301, 1, true)->size(), 3u);
  EXPECT_TRUE(store_->RetireStepStarts(301, 1, false)->empty());  // g1 alone: one step.
  auto step = store_->RetireUserLedgers(301, 2, "", "");
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->retired, 2u);
  EXPECT_EQ(step->next, starts->front());
  step = store_->RetireUserLedgers(301, 2, "", starts->front());
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->retired, 2u);
  EXPECT_FALSE(step->more);
  EXPECT_TRUE((*store_->FindUserLearned("alice", "u3"))->retired);
  EXPECT_TRUE((*store_->FindUserLearned("bob", "b1"))->retired);
  EXPECT_FALSE((*store_->FindUserLearned("bob", "b2"))->retired);
  EXPECT_TRUE(store_->RetireStepStarts(301, 1, true)->empty());
  ExpectConsistent();
}

TEST_F(UserExpiryStoreTest, RetireStepsTakeUsersAndSourcesInOrderAndChangeNoCount) {
  LearnSixRecords();
  const model::ModelStats alice = UserStatsOf("alice");
  const model::ModelStats bob = UserStatsOf("bob");
  const model::ModelStats global = *store_->Stats();
  const std::string words = "cheap pills watches meeting notes fresh";

  // Alice's source "a" gives u1 then u2: the first step's two.
  auto step = store_->RetireUserLedgers(301, 2, "9-1");
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->retired, 2u);
  EXPECT_TRUE(step->more);
  EXPECT_EQ(store_->StreamPosition(), "9-1");
  EXPECT_TRUE((*store_->FindUserLearned("alice", "u1"))->retired);
  EXPECT_TRUE((*store_->FindUserLearned("alice", "u2"))->retired);
  EXPECT_FALSE((*store_->FindUserLearned("alice", "u3"))->retired);
  // Then alice's "b" (u3) and bob's b1; bob's b2 is newer than the horizon.
  step = store_->RetireUserLedgers(301, 2, "", step->next);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->retired, 2u);
  EXPECT_FALSE(step->more);
  EXPECT_EQ(store_->RetireUserLedgers(301, 2)->retired, 0u);
  EXPECT_FALSE((*store_->FindUserLearned("bob", "b2"))->retired);
  // The global ledger is not the users' retention's.
  EXPECT_FALSE((*store_->FindLearned("g1"))->retired);

  // The record keeps its label and origin, without its tokens; the user's index no longer lists
  // it; when the user last learned is still known.
  const model::LedgerEntry u1 = **store_->FindUserLearned("alice", "u1");
  EXPECT_EQ(u1.label, "spam");
  EXPECT_TRUE(u1.tokens.empty());
  EXPECT_EQ(u1.origin, (model::LearnOrigin{"a", 100}));
  EXPECT_TRUE(store_->ListUserLearned("alice", "a", 0, kForever, 10)->empty());
  EXPECT_EQ(store_->ListUserLearned("bob", "", 0, kForever, 10)->size(), 1u);
  EXPECT_EQ(*store_->UserLastLearned("alice"), std::optional<std::int64_t>(300));
  EXPECT_EQ(*store_->UserLastLearned("bob"), std::optional<std::int64_t>(500));

  // Nothing a score reads changed.
  EXPECT_EQ(UserStatsOf("alice"), alice);
  EXPECT_EQ(UserStatsOf("bob"), bob);
  EXPECT_EQ(*store_->Stats(), global);
  EXPECT_EQ(UserCountOf(*store_, "alice", words), 6u);
  EXPECT_EQ(UserCountOf(*store_, "bob", words), 2u);
  ExpectConsistent();
  EXPECT_EQ(UserStatsOf("alice"), alice);

  // A repair rebuilds the same layers from the live records and the users' base counts.
  store_.reset();
  auto repaired = RepairModel(dir_.Join("model"));
  ASSERT_TRUE(repaired.has_value()) << repaired.error().message;
  EXPECT_TRUE(repaired->ok());
  Open();
  EXPECT_EQ(UserStatsOf("alice"), alice);
  EXPECT_EQ(UserStatsOf("bob"), bob);
  EXPECT_EQ(UserCountOf(*store_, "alice", words), 6u);
}

class UserTokenExpiryStoreTest : public UserExpiryStoreTest {
 protected:
  void SetUp() override {
    UserExpiryStoreTest::SetUp();
    // Alice, as the global TokenExpiryStoreTest: "rare" once (day 1), "twice" in two old
    // messages, "pills" in an old and a live one. Bob: "rare" once, in ham, day 1.
    LearnForUserAt(*store_, "alice", "o1", "spam", "cheap pills rare twice", "", 1 * kDay);
    LearnForUserAt(*store_, "alice", "o2", "spam", "cheap twice", "", 2 * kDay);
    LearnForUserAt(*store_, "alice", "o3", "ham", "meeting notes", "", 3 * kDay);
    LearnForUserAt(*store_, "alice", "live", "spam", "pills fresh", "", 50 * kDay);
    LearnForUserAt(*store_, "bob", "b1", "ham", "rare", "", 1 * kDay);
    // The global model has "rare" too, in a record retired as well: the users' expiry leaves it.
    LearnGlobalAt(*store_, "g1", "spam", "rare", 1 * kDay);
    ASSERT_EQ(store_->RetireLedger(10 * kDay, 100)->retired, 1u);
    auto step = store_->RetireUserLedgers(10 * kDay, 100);
    ASSERT_TRUE(step.has_value()) << step.error().message;
    ASSERT_EQ(step->retired, 4u);
  }
};

TEST_F(UserTokenExpiryStoreTest, DropsOnlyRareOldTokensNoLiveUserRecordHoldsAndStaysExact) {
  const model::ModelStats alice = UserStatsOf("alice");
  // n_spam 8 (4 + 2 + 2), n_ham 2, |V_u| 7.
  ASSERT_EQ(alice.classes[0].tokens, 8u);
  ASSERT_EQ(alice.classes[1].tokens, 2u);
  ASSERT_EQ(alice.vocabulary_size, 7u);
  const model::ModelStats global = *store_->Stats();
  // Rare and last seen before day 5: alice's "rare", "meeting", "notes", bob's "rare". "pills"
  // and "fresh" are held by alice's live record; "cheap" and "twice" are counted twice.
  auto step = store_->ExpireUserTokens({.seen_before = 5 * kDay, .max_count = 1}, "", 1000,
                                       std::nullopt, "9-2");
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->dropped, 4u);
  EXPECT_EQ(step->examined, 7u);  // Alice's 6 base tokens and bob's one.
  EXPECT_FALSE(step->next.has_value());
  EXPECT_EQ(store_->StreamPosition(), "9-2");
  const model::ModelStats after = UserStatsOf("alice");
  EXPECT_EQ(after.vocabulary_size, 4u);
  EXPECT_EQ(after.classes[0].tokens, 7u);     // spam: "rare".
  EXPECT_EQ(after.classes[1].tokens, 0u);     // ham: "meeting notes".
  EXPECT_EQ(after.classes[0].documents, 3u);  // Documents stay.
  EXPECT_EQ(after.classes[1].documents, 1u);
  for (const char* gone : {"rare", "meeting", "notes"}) {
    EXPECT_EQ(UserCountOf(*store_, "alice", gone), 0u);
  }
  for (const char* kept : {"cheap", "twice", "pills", "fresh"}) {
    EXPECT_GT(UserCountOf(*store_, "alice", kept), 0u);
  }
  const model::ModelStats bob = UserStatsOf("bob");
  EXPECT_EQ(bob.vocabulary_size, 0u);
  EXPECT_EQ(bob.classes[1].tokens, 0u);
  EXPECT_EQ(bob.classes[1].documents, 1u);
  // The global model is not the users' expiry's.
  EXPECT_EQ(*store_->Stats(), global);
  EXPECT_EQ(GlobalCountOf(*store_, "rare"), 1u);
  ExpectConsistent();
  EXPECT_EQ(UserStatsOf("alice"), after);

  // Forgetting the live record afterwards removes exactly what it added.
  auto learned = store_->FindUserLearned("alice", "live");
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  model::Delta forget;
  model::AddUserForget(forget, "alice", "live", **learned, *store_->Stats());
  ASSERT_TRUE(store_->Apply(forget).has_value());
  EXPECT_EQ(UserCountOf(*store_, "alice", "fresh"), 0u);
  EXPECT_EQ(UserCountOf(*store_, "alice", "pills"), 1u);  // The old record's, now a base count.
  ExpectConsistent();
  // With nothing live any more, "pills" expires too.
  EXPECT_EQ(store_->ExpireUserTokens({.seen_before = 5 * kDay, .max_count = 1}, "", 1000)->dropped,
            1u);
  ExpectConsistent();
  EXPECT_EQ(UserStatsOf("alice").vocabulary_size, 2u);  // "cheap" and "twice".
}

TEST_F(UserTokenExpiryStoreTest, StepsResumeWhereTheyStoppedAndRangesSplitThePass) {
  std::uint64_t dropped = 0;
  std::optional<std::string> from = "";
  int steps = 0;
  while (from) {
    auto step = store_->ExpireUserTokens({.seen_before = 100 * kDay}, *from, 2);
    ASSERT_TRUE(step.has_value()) << step.error().message;
    EXPECT_LE(step->examined, 2u);
    dropped += step->dropped;
    from = step->next;
    ++steps;
  }
  EXPECT_EQ(steps, 4);  // 7 base records, 2 a step.
  // Every token with only base counts: all of alice's but "pills" and "fresh", and bob's "rare".
  EXPECT_EQ(dropped, 6u);
  EXPECT_EQ(UserStatsOf("alice").vocabulary_size, 2u);
  EXPECT_EQ(UserStatsOf("bob").vocabulary_size, 0u);
  ExpectConsistent();
}

TEST_F(UserTokenExpiryStoreTest, RangesOfKeysSplitThePassAsStepsDo) {
  // Everything before bob's keys, then bob's: the same as one pass.
  auto first =
      store_->ExpireUserTokens({.seen_before = 100 * kDay}, "", 0, std::string("bob") + '\0');
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(first->dropped, 5u);
  EXPECT_EQ(UserStatsOf("bob").vocabulary_size, 1u);
  auto second = store_->ExpireUserTokens({.seen_before = 100 * kDay}, std::string("bob") + '\0', 0);
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(second->dropped, 1u);
  EXPECT_EQ(UserStatsOf("bob").vocabulary_size, 0u);
  ExpectConsistent();
}

TEST_F(UserTokenExpiryStoreTest, AWeightyUserTokenIsKeptByTheUserLayersOwnWeight) {
  // Alice: n_spam 8, n_ham 2, |V_u| 7, alpha 1: "meeting" and "notes" (once in ham) weigh
  // |log((0+1)/15) - log((1+1)/9)| = 1.20; "cheap" and "twice" (twice in spam)
  // |log(3/15) - log(1/9)| = 0.59; "rare" (once in spam) |log(2/15) - log(1/9)| = 0.18.
  // Bob: n_spam 0, n_ham 1, |V_u| 1: "rare" (once in ham) weighs
  // |log((0+1)/(0+1)) - log((1+1)/(1+1))| = 0, so it goes.
  auto step = store_->ExpireUserTokens({.seen_before = 100 * kDay, .keep_weight = 1.0}, "", 1000);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->dropped, 4u);
  EXPECT_GT(UserCountOf(*store_, "alice", "meeting"), 0u);
  EXPECT_GT(UserCountOf(*store_, "alice", "notes"), 0u);
  EXPECT_EQ(UserCountOf(*store_, "alice", "cheap"), 0u);
  EXPECT_EQ(UserCountOf(*store_, "alice", "rare"), 0u);
  EXPECT_EQ(UserCountOf(*store_, "bob", "rare"), 0u);
  ExpectConsistent();
}

TEST_F(UserTokenExpiryStoreTest, KeepHamKeepsTheTokensTheUsersOwnLayerCountedInHam) {
  // Alice's spam-only old words go; her ham words stay, and so does Bob's "rare" (in his ham),
  // though the global model counts "rare" in spam only.
  auto step = store_->ExpireUserTokens({.seen_before = 100 * kDay, .keep_ham = true}, "", 1000);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->dropped, 3u);  // Alice's "rare", "cheap", "twice".
  for (const char* gone : {"rare", "cheap", "twice"})
    EXPECT_EQ(UserCountOf(*store_, "alice", gone), 0u) << gone;
  EXPECT_GT(UserCountOf(*store_, "alice", "meeting"), 0u);
  EXPECT_GT(UserCountOf(*store_, "alice", "notes"), 0u);
  EXPECT_GT(UserCountOf(*store_, "bob", "rare"), 0u);
  ExpectConsistent();
}

}  // namespace
}  // namespace nbspamd::storage
