// Planning a user's learn, relearn and forget (user_layer.h): the user part of a Delta, alone or
// beside the global part, is exact and inverse; a user with no layer scores as the global model.
#include "model/user_layer.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "model/classifier.h"
#include "model/layered.h"
#include "tests/support/token_bags.h"

namespace nbspamd::model {
namespace {

using test_support::BagOf;

ModelStats SeedClasses() {
  ModelStats stats;
  stats.classes = {{"spam", 4, 13}, {"ham", 2, 6}};
  stats.vocabulary_size = 6;
  return stats;
}

// The net count change per (token, class) and per class of a user change.
std::map<std::pair<TokenHash, std::uint32_t>, std::int64_t> Net(
    const std::vector<UserLayerChange>& changes) {
  std::map<std::pair<TokenHash, std::uint32_t>, std::int64_t> net;
  for (const UserLayerChange& change : changes) {
    for (const TokenCountChange& token : change.token_changes) {
      net[{token.hash, token.class_index}] += token.change;
    }
    for (const DocumentCountChange& document : change.document_changes) {
      net[{~TokenHash{0}, document.class_index}] += document.change;
    }
  }
  std::erase_if(net, [](const auto& entry) { return entry.second == 0; });
  return net;
}

TEST(UserLayerTest, UserIdsAreCheckedForStorageKeys) {
  EXPECT_TRUE(CheckUserId("alice@example.org").has_value());
  EXPECT_TRUE(CheckUserId(std::string(kMaxUserIdBytes, 'u')).has_value());
  EXPECT_EQ(CheckUserId("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckUserId(std::string(kMaxUserIdBytes + 1, 'u')).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckUserId(std::string("a\0b", 3)).error().code, ErrorCode::kInvalidArgument);
}

TEST(UserLayerTest, AUserLearnAloneLeavesTheGlobalPartEmpty) {
  Delta delta;
  const LearnStatus status = AddUserLearn(delta, "alice", "m1", "ham", BagOf({{1, 2}, {5, 1}}),
                                          std::nullopt, SeedClasses(), {"feedback", 100});
  EXPECT_EQ(status, LearnStatus::kLearned);
  ASSERT_TRUE(delta.user.has_value());
  Delta global_part = delta;
  global_part.user.reset();
  EXPECT_EQ(global_part, Delta{});
  const UserLayerChange& user = *delta.user;
  EXPECT_EQ(user.user, "alice");
  EXPECT_EQ(user.token_changes, (std::vector<TokenCountChange>{{1, 1, 2}, {5, 1, 1}}));
  EXPECT_EQ(user.document_changes, (std::vector<DocumentCountChange>{{1, 1}}));
  EXPECT_EQ(user.ledger_id, "m1");
  EXPECT_EQ(user.ledger_entry,
            (LedgerEntry{"ham", {{1, 2}, {5, 1}}, {"feedback", 100}, std::nullopt}));
  EXPECT_FALSE(user.replaced_origin.has_value());
}

TEST(UserLayerTest, TheSameLabelAgainIsUnchangedAndAddsNothing) {
  Delta delta;
  const LedgerEntry learned{"spam", {{1, 1}}, {}, std::nullopt};
  EXPECT_EQ(AddUserLearn(delta, "alice", "m1", "spam", BagOf({{1, 1}}), learned, SeedClasses()),
            LearnStatus::kUnchanged);
  EXPECT_EQ(delta, Delta{});
}

TEST(UserLayerTest, ARelearnMovesTheUsersCountsOnly) {
  Delta delta;
  const LedgerEntry learned{"spam", {{1, 3}}, {"mx1", 100}, std::nullopt};
  EXPECT_EQ(AddUserLearn(delta, "alice", "m1", "ham", BagOf({{1, 3}}), learned, SeedClasses(),
                         {"feedback", 200}),
            LearnStatus::kRelearned);
  const UserLayerChange& user = *delta.user;
  EXPECT_EQ(user.token_changes, (std::vector<TokenCountChange>{{1, 0, -3}, {1, 1, 3}}));
  EXPECT_EQ(user.document_changes, (std::vector<DocumentCountChange>{{0, -1}, {1, 1}}));
  EXPECT_EQ(user.replaced_origin, (LearnOrigin{"mx1", 100}));
  EXPECT_EQ(user.ledger_entry->origin, (LearnOrigin{"feedback", 200}));
  EXPECT_TRUE(delta.token_changes.empty());
}

TEST(UserLayerTest, BesideTheGlobalPartANewClassIsCreatedOnce) {
  LearnPlan plan = PlanLearn("m1", "phishing", BagOf({{4, 1}}), std::nullopt, SeedClasses());
  EXPECT_EQ(AddUserLearn(plan.delta, "alice", "m1", "phishing", BagOf({{4, 1}}), std::nullopt,
                         SeedClasses()),
            LearnStatus::kLearned);
  EXPECT_EQ(plan.delta.new_classes, (std::vector<std::string>{"phishing"}));
  EXPECT_EQ(plan.delta.token_changes, (std::vector<TokenCountChange>{{4, 2, 1}}));
  EXPECT_EQ(plan.delta.user->token_changes, (std::vector<TokenCountChange>{{4, 2, 1}}));
  EXPECT_EQ(plan.delta.user->document_changes, (std::vector<DocumentCountChange>{{2, 1}}));

  // Alone, the user part creates the class itself.
  Delta alone;
  ASSERT_EQ(
      AddUserLearn(alone, "bob", "m1", "phishing", BagOf({{4, 1}}), std::nullopt, SeedClasses()),
      LearnStatus::kLearned);
  EXPECT_EQ(alone.new_classes, (std::vector<std::string>{"phishing"}));
  EXPECT_EQ(alone.user->document_changes, (std::vector<DocumentCountChange>{{2, 1}}));
}

TEST(UserLayerTest, ForgetUndoesLearnAndRelearnExactly) {
  const ModelStats stats = SeedClasses();
  const TokenBag bag = BagOf({{1, 2}, {7, 1}, {9, 4}});
  Delta learn;
  ASSERT_EQ(AddUserLearn(learn, "alice", "m1", "spam", bag, std::nullopt, stats),
            LearnStatus::kLearned);
  Delta relearn;
  ASSERT_EQ(AddUserLearn(relearn, "alice", "m1", "ham", bag, learn.user->ledger_entry, stats),
            LearnStatus::kRelearned);
  Delta forget;
  AddUserForget(forget, "alice", "m1", *relearn.user->ledger_entry, stats);
  EXPECT_FALSE(forget.user->ledger_entry.has_value());
  EXPECT_EQ(forget.user->ledger_id, "m1");
  EXPECT_EQ(forget.user->replaced_origin, LearnOrigin{});
  EXPECT_TRUE(Net({*learn.user, *relearn.user, *forget.user}).empty());
  EXPECT_FALSE(Net({*learn.user, *relearn.user}).empty());
}

TEST(UserLayerTest, ForgetBesideAGlobalForgetKeepsBothParts) {
  const ModelStats stats = SeedClasses();
  const LedgerEntry record{"spam", {{1, 2}}, {}, std::nullopt};
  Delta delta = PlanForget("m1", record, stats);
  AddUserForget(delta, "alice", "m1", record, stats);
  EXPECT_EQ(delta.token_changes, (std::vector<TokenCountChange>{{1, 0, -2}}));
  EXPECT_EQ(delta.user->token_changes, (std::vector<TokenCountChange>{{1, 0, -2}}));
  EXPECT_EQ(delta.ledger_id, "m1");
  EXPECT_EQ(delta.user->ledger_id, "m1");
}

TEST(UserLayerTest, LayerStatsTakeTheGlobalClasses) {
  ModelStats layer;
  layer.classes = {{"spam", 1, 5}, {"ham", 2, 7}};
  layer.vocabulary_size = 9;
  ModelStats global = SeedClasses();
  global.classes.push_back({"phishing", 3, 3});
  const ModelStats aligned = AlignLayerStats(layer, global);
  ASSERT_EQ(aligned.classes.size(), 3u);
  EXPECT_EQ(aligned.classes[0], (ClassStats{"spam", 1, 5}));
  EXPECT_EQ(aligned.classes[1], (ClassStats{"ham", 2, 7}));
  EXPECT_EQ(aligned.classes[2], (ClassStats{"phishing", 0, 0}));
  EXPECT_EQ(aligned.vocabulary_size, 9u);
}

TEST(UserLayerTest, AUserWithoutALayerScoresExactlyAsTheGlobalModel) {
  const TokenBag bag = BagOf({{1, 1}, {2, 3}, {3, 1}});
  Snapshot global{std::make_shared<const ModelStats>(SeedClasses()), {3, 1, 0, 2, 0, 0}};
  const Snapshot empty = EmptyLayerSnapshot(*global.stats, bag.entries.size());
  EXPECT_EQ(empty.counts.size(), 6u);
  EXPECT_EQ(empty.stats->classes.size(), 2u);
  EXPECT_EQ(empty.stats->TotalDocuments(), 0u);
  ClassifyOptions options;
  options.alpha = 1.0;
  const auto layered = ClassifyLayered(bag, global, empty, options, LayerOptions{});
  const auto plain = Classify(bag, global, options);
  ASSERT_TRUE(layered.has_value() && plain.has_value());
  EXPECT_EQ(layered->log_odds, plain->log_odds);
  EXPECT_EQ(layered->score, plain->score);
}

}  // namespace
}  // namespace nbspamd::model
