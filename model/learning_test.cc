#include "model/learning.h"

#include <gtest/gtest.h>

#include "model/calibration.h"
#include "tests/support/token_bags.h"

namespace nbspamd::model {
namespace {

using test_support::BagOf;

ModelStats TwoClasses() {
  ModelStats stats;
  stats.classes = {{"spam", 0, 0}, {"ham", 0, 0}};
  return stats;
}

TEST(LearningTest, NewIdIsLearned) {
  const LearnPlan plan =
      PlanLearn("m1", "ham", BagOf({{1, 2}, {5, 1}}), std::nullopt, TwoClasses());
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
  const LedgerEntry learned{"spam", {{1, 1}}, {}, std::nullopt};
  const LearnPlan plan = PlanLearn("m1", "spam", BagOf({{2, 1}}), learned, TwoClasses());
  EXPECT_EQ(plan.status, LearnStatus::kUnchanged);
  EXPECT_EQ(plan.delta, Delta{});
}

TEST(LearningTest, OtherLabelMovesTheLearnedCounts) {
  const LedgerEntry learned{"spam", {{1, 3}}, {"mx1", 100}, std::nullopt};
  const LearnPlan plan =
      PlanLearn("m1", "ham", BagOf({{1, 3}}), learned, TwoClasses(), {"feedback", 200});
  EXPECT_EQ(plan.status, LearnStatus::kRelearned);
  EXPECT_EQ(plan.delta.replaced_origin, (LearnOrigin{"mx1", 100}));
  EXPECT_EQ(plan.delta.ledger_entry->origin, (LearnOrigin{"feedback", 200}));
  const std::vector<TokenCountChange> expected{{1, 0, -3}, {1, 1, 3}};
  EXPECT_EQ(plan.delta.token_changes, expected);
  const std::vector<DocumentCountChange> documents{{0, -1}, {1, 1}};
  EXPECT_EQ(plan.delta.document_changes, documents);
}

TEST(LearningTest, NewLabelCreatesAClass) {
  const LearnPlan plan = PlanLearn("m1", "phishing", BagOf({{4, 1}}), std::nullopt, TwoClasses());
  EXPECT_EQ(plan.delta.new_classes, (std::vector<std::string>{"phishing"}));
  EXPECT_EQ(plan.delta.token_changes, (std::vector<TokenCountChange>{{4, 2, 1}}));
  EXPECT_EQ(plan.delta.document_changes, (std::vector<DocumentCountChange>{{2, 1}}));
}

TEST(LearningTest, ForgetRemovesExactlyTheRecordedCounts) {
  const LedgerEntry learned{"ham", {{1, 2}, {8, 1}}, {"mx1", 5}, std::nullopt};
  const Delta delta = PlanForget("m1", learned, TwoClasses());
  EXPECT_EQ(delta.replaced_origin, (LearnOrigin{"mx1", 5}));
  const std::vector<TokenCountChange> expected{{1, 1, -2}, {8, 1, -1}};
  EXPECT_EQ(delta.token_changes, expected);
  EXPECT_EQ(delta.document_changes, (std::vector<DocumentCountChange>{{1, -1}}));
  EXPECT_EQ(delta.ledger_id, "m1");
  EXPECT_FALSE(delta.ledger_entry.has_value());
}

// Score 0.6 is bin 65 of the current layout: (0.6 + 2) / 0.04 = 65.
TEST(LearningTest, ANewRecordKeepsItsHeldOutScoreAndCountsInItsCell) {
  ASSERT_EQ(CalibrationBin(0.6), 65u);
  const HeldOutScore held_out{kScoreScale, 0.6};
  const LearnPlan plan =
      PlanLearn("m1", "spam", BagOf({{1, 1}}), std::nullopt, TwoClasses(), {"mx1", 7}, held_out);
  ASSERT_TRUE(plan.delta.ledger_entry.has_value());
  EXPECT_EQ(plan.delta.ledger_entry->held_out, held_out);
  EXPECT_EQ(plan.delta.feedback_changes, (std::vector<FeedbackChange>{{65, true, 1}}));
  // Without a score, or as a third class, it counts nowhere.
  EXPECT_TRUE(PlanLearn("m2", "ham", BagOf({{1, 1}}), std::nullopt, TwoClasses())
                  .delta.feedback_changes.empty());
  EXPECT_TRUE(PlanLearn("m3", "phishing", BagOf({{1, 1}}), std::nullopt, TwoClasses(), {}, held_out)
                  .delta.feedback_changes.empty());
}

TEST(LearningTest, ARelearnKeepsTheFirstHeldOutScoreAndMovesItsCell) {
  const LedgerEntry learned{"spam", {{1, 3}}, {"mx1", 100}, HeldOutScore{kScoreScale, -1.0}};
  ASSERT_EQ(CalibrationBin(-1.0), 25u);
  const LearnPlan plan = PlanLearn("m1", "ham", BagOf({{1, 3}}), learned, TwoClasses(),
                                   {"feedback", 200}, HeldOutScore{kScoreScale, 1.8});
  EXPECT_EQ(plan.status, LearnStatus::kRelearned);
  EXPECT_EQ(plan.delta.ledger_entry->held_out, (HeldOutScore{kScoreScale, -1.0}))
      << "the score of the model that had learned the message already is not held out";
  EXPECT_EQ(plan.delta.feedback_changes,
            (std::vector<FeedbackChange>{{25, true, -1}, {25, false, 1}}));
}

TEST(LearningTest, ForgetRemovesTheCellAndAnotherScaleCountsNowhere) {
  const LedgerEntry learned{"ham", {{1, 2}}, {"mx1", 5}, HeldOutScore{kScoreScale, -2.0}};
  EXPECT_EQ(PlanForget("m1", learned, TwoClasses()).feedback_changes,
            (std::vector<FeedbackChange>{{0, false, -1}}));
  const LedgerEntry old_scale{"ham", {{1, 2}}, {}, HeldOutScore{kScoreScale + 1, -2.0}};
  EXPECT_TRUE(PlanForget("m1", old_scale, TwoClasses()).feedback_changes.empty());
  EXPECT_FALSE(FeedbackCellOf(old_scale).has_value());
}

}  // namespace
}  // namespace nbspamd::model
