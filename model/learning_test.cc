#include "model/learning.h"

#include <gtest/gtest.h>

namespace nbspamd::model {
namespace {

ModelStats TwoClasses() {
  ModelStats stats;
  stats.classes = {{"spam", 0, 0}, {"ham", 0, 0}};
  return stats;
}

TokenBag Bag(std::vector<BagEntry> entries) {
  TokenBag bag;
  bag.entries = std::move(entries);
  return bag;
}

TEST(LearningTest, NewIdIsLearned) {
  const LearnPlan plan = PlanLearn("m1", "ham", Bag({{1, 2}, {5, 1}}), std::nullopt, TwoClasses());
  EXPECT_EQ(plan.status, LearnStatus::kLearned);
  EXPECT_EQ(LearnStatusName(plan.status), "learned");
  const std::vector<TokenCountChange> expected{{1, 1, 2}, {5, 1, 1}};
  EXPECT_EQ(plan.delta.token_changes, expected);
  EXPECT_EQ(plan.delta.document_changes, (std::vector<DocumentCountChange>{{1, 1}}));
  EXPECT_TRUE(plan.delta.new_classes.empty());
  EXPECT_EQ(plan.delta.ledger_id, "m1");
  ASSERT_TRUE(plan.delta.ledger_entry.has_value());
  EXPECT_EQ(plan.delta.ledger_entry->label, "ham");
  EXPECT_EQ(plan.delta.ledger_entry->tokens, (std::vector<BagEntry>{{1, 2}, {5, 1}}));
}

TEST(LearningTest, SameIdSameLabelIsUnchanged) {
  const LedgerEntry learned{"spam", {{1, 1}}, {}};
  const LearnPlan plan = PlanLearn("m1", "spam", Bag({{2, 1}}), learned, TwoClasses());
  EXPECT_EQ(plan.status, LearnStatus::kUnchanged);
  EXPECT_EQ(plan.delta, Delta{});
}

TEST(LearningTest, OtherLabelMovesTheLearnedCounts) {
  const LedgerEntry learned{"spam", {{1, 3}}, {"mx1", 100}};
  const LearnPlan plan =
      PlanLearn("m1", "ham", Bag({{1, 3}}), learned, TwoClasses(), {"feedback", 200});
  EXPECT_EQ(plan.status, LearnStatus::kRelearned);
  EXPECT_EQ(plan.delta.replaced_origin, (LearnOrigin{"mx1", 100}));
  EXPECT_EQ(plan.delta.ledger_entry->origin, (LearnOrigin{"feedback", 200}));
  const std::vector<TokenCountChange> expected{{1, 0, -3}, {1, 1, 3}};
  EXPECT_EQ(plan.delta.token_changes, expected);
  const std::vector<DocumentCountChange> documents{{0, -1}, {1, 1}};
  EXPECT_EQ(plan.delta.document_changes, documents);
}

TEST(LearningTest, NewLabelCreatesAClass) {
  const LearnPlan plan = PlanLearn("m1", "phishing", Bag({{4, 1}}), std::nullopt, TwoClasses());
  EXPECT_EQ(plan.delta.new_classes, (std::vector<std::string>{"phishing"}));
  EXPECT_EQ(plan.delta.token_changes, (std::vector<TokenCountChange>{{4, 2, 1}}));
  EXPECT_EQ(plan.delta.document_changes, (std::vector<DocumentCountChange>{{2, 1}}));
}

TEST(LearningTest, ForgetRemovesExactlyTheRecordedCounts) {
  const LedgerEntry learned{"ham", {{1, 2}, {8, 1}}, {"mx1", 5}};
  const Delta delta = PlanForget("m1", learned, TwoClasses());
  EXPECT_EQ(delta.replaced_origin, (LearnOrigin{"mx1", 5}));
  const std::vector<TokenCountChange> expected{{1, 1, -2}, {8, 1, -1}};
  EXPECT_EQ(delta.token_changes, expected);
  EXPECT_EQ(delta.document_changes, (std::vector<DocumentCountChange>{{1, -1}}));
  EXPECT_EQ(delta.ledger_id, "m1");
  EXPECT_FALSE(delta.ledger_entry.has_value());
}

}  // namespace
}  // namespace nbspamd::model
