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

// Error-driven training: a message right beyond the margin is only checked.
TEST(LearningTest, AMessageNotCountedIsOnlyChecked) {
  const HeldOutScore held_out{kScoreScale, 0.6};
  const LearnPlan plan = PlanLearn("m1", "spam", BagOf({{1, 2}, {5, 1}}), std::nullopt,
                                   TwoClasses(), {"mx1", 7}, held_out, /*count=*/false);
  EXPECT_EQ(plan.status, LearnStatus::kChecked);
  EXPECT_EQ(LearnStatusName(plan.status), "checked");
  EXPECT_TRUE(plan.delta.token_changes.empty());
  EXPECT_TRUE(plan.delta.document_changes.empty());
  ASSERT_TRUE(plan.delta.ledger_entry.has_value());
  EXPECT_TRUE(plan.delta.ledger_entry->checked);
  EXPECT_TRUE(plan.delta.ledger_entry->tokens.empty());
  EXPECT_EQ(plan.delta.ledger_entry->held_out, held_out);
  // Its held-out score still calibrates: the model's verdict on it is feedback all the same.
  EXPECT_EQ(plan.delta.feedback_changes, (std::vector<FeedbackChange>{{65, true, 1}}));

  // Forgotten, it takes back only its record and its cell.
  const Delta forget = PlanForget("m1", *plan.delta.ledger_entry, TwoClasses());
  EXPECT_TRUE(forget.token_changes.empty());
  EXPECT_TRUE(forget.document_changes.empty());
  EXPECT_FALSE(forget.ledger_entry.has_value());
  EXPECT_EQ(forget.feedback_changes, (std::vector<FeedbackChange>{{65, true, -1}}));
}

TEST(LearningTest, ACheckedRecordIsCountedWhenLearnedAgainWithCount) {
  LedgerEntry checked{"spam", {}, {"mx1", 7}, HeldOutScore{kScoreScale, 0.6}};
  checked.checked = true;
  // Not counted again: nothing changes.
  EXPECT_EQ(PlanLearn("m1", "spam", BagOf({{1, 2}}), checked, TwoClasses(), {"mx1", 9},
                      std::nullopt, /*count=*/false)
                .status,
            LearnStatus::kUnchanged);
  // Counted now (a later pass found it near the boundary): its tokens and document are added,
  // and it keeps its first held-out score.
  const LearnPlan plan = PlanLearn("m1", "spam", BagOf({{1, 2}, {5, 1}}), checked, TwoClasses(),
                                   {"mx1", 9}, std::nullopt, /*count=*/true);
  EXPECT_EQ(plan.status, LearnStatus::kLearned);
  EXPECT_EQ(plan.delta.token_changes, (std::vector<TokenCountChange>{{1, 0, 2}, {5, 0, 1}}));
  EXPECT_EQ(plan.delta.document_changes, (std::vector<DocumentCountChange>{{0, 1}}));
  ASSERT_TRUE(plan.delta.ledger_entry.has_value());
  EXPECT_FALSE(plan.delta.ledger_entry->checked);
  EXPECT_EQ(plan.delta.ledger_entry->held_out, checked.held_out);
  EXPECT_EQ(plan.delta.replaced_origin, (LearnOrigin{"mx1", 7}));
}

TEST(LearningTest, ACorrectionOfACheckedRecordCountsOnlyTheNewClass) {
  LedgerEntry checked{"spam", {}, {"mx1", 7}, std::nullopt};
  checked.checked = true;
  const LearnPlan plan =
      PlanLearn("m1", "ham", BagOf({{3, 1}}), checked, TwoClasses(), {"user", 9});
  EXPECT_EQ(plan.status, LearnStatus::kRelearned);
  EXPECT_EQ(plan.delta.token_changes, (std::vector<TokenCountChange>{{3, 1, 1}}));
  EXPECT_EQ(plan.delta.document_changes, (std::vector<DocumentCountChange>{{1, 1}}));
  EXPECT_FALSE(plan.delta.ledger_entry->checked);
}

TEST(LearningTest, ACountedRecordMadeCheckedTakesItsCountsBack) {
  // An autolearned record taken over by a label that is not counted: its counts leave.
  const LedgerEntry learned{"spam", {{1, 3}}, {std::string(kAutolearnSource), 5}, std::nullopt};
  const LearnPlan plan = PlanLearn("m1", "spam", BagOf({{1, 3}}), learned, TwoClasses(), {"mx1", 9},
                                   std::nullopt, /*count=*/false);
  EXPECT_EQ(plan.status, LearnStatus::kChecked);
  EXPECT_EQ(plan.delta.token_changes, (std::vector<TokenCountChange>{{1, 0, -3}}));
  EXPECT_EQ(plan.delta.document_changes, (std::vector<DocumentCountChange>{{0, -1}}));
  EXPECT_TRUE(plan.delta.ledger_entry->checked);
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

TEST(LearningTest, AutolearnNeverChangesARecord) {
  const LearnOrigin autolearn{std::string(kAutolearnSource), 300};
  const LedgerEntry manual{"ham", {{1, 3}}, {"mx1", 100}, std::nullopt};
  EXPECT_EQ(PlanLearn("m1", "spam", BagOf({{1, 3}}), manual, TwoClasses(), autolearn).status,
            LearnStatus::kUnchanged);
  const LedgerEntry learned_by_itself{"spam", {{1, 3}}, autolearn, std::nullopt};
  const LearnPlan again =
      PlanLearn("m1", "ham", BagOf({{1, 3}}), learned_by_itself, TwoClasses(), autolearn);
  EXPECT_EQ(again.status, LearnStatus::kUnchanged);
  EXPECT_EQ(again.delta, Delta{});
  // A new id is learned as any other.
  EXPECT_EQ(PlanLearn("m2", "spam", BagOf({{1, 1}}), std::nullopt, TwoClasses(), autolearn).status,
            LearnStatus::kLearned);
}

TEST(LearningTest, AManualLabelTakesOverAnAutolearnedRecord) {
  const HeldOutScore held_out{kScoreScale, 0.6};
  const LedgerEntry autolearned{
      "spam", {{1, 3}, {4, 1}}, {std::string(kAutolearnSource), 100}, held_out};
  // The same label: the record becomes the person's, its counts those of the new bag.
  const LearnPlan same = PlanLearn("m1", "spam", BagOf({{1, 3}, {5, 2}}), autolearned, TwoClasses(),
                                   {"feedback", 200});
  EXPECT_EQ(same.status, LearnStatus::kRelearned);
  EXPECT_EQ(same.delta.replaced_origin, autolearned.origin);
  ASSERT_TRUE(same.delta.ledger_entry.has_value());
  EXPECT_EQ(same.delta.ledger_entry->origin, (LearnOrigin{"feedback", 200}));
  EXPECT_EQ(same.delta.ledger_entry->held_out, held_out);
  EXPECT_EQ(same.delta.token_changes, (std::vector<TokenCountChange>{{4, 0, -1}, {5, 0, 2}}));
  EXPECT_TRUE(same.delta.document_changes.empty());
  // The held-out score counts from now on, under the person's label.
  EXPECT_EQ(same.delta.feedback_changes, (std::vector<FeedbackChange>{{65, true, 1}}));
  // The other label: an ordinary relearn.
  const LearnPlan other =
      PlanLearn("m1", "ham", BagOf({{1, 3}}), autolearned, TwoClasses(), {"feedback", 200});
  EXPECT_EQ(other.status, LearnStatus::kRelearned);
  EXPECT_EQ(other.delta.document_changes, (std::vector<DocumentCountChange>{{0, -1}, {1, 1}}));
  EXPECT_EQ(other.delta.feedback_changes, (std::vector<FeedbackChange>{{65, false, 1}}));
  // Once it is the person's, the same label again is unchanged.
  EXPECT_EQ(PlanLearn("m1", "spam", BagOf({{1, 3}}), *same.delta.ledger_entry, TwoClasses(),
                      {"feedback", 300})
                .status,
            LearnStatus::kUnchanged);
}

TEST(LearningTest, AnAutolearnedRecordCalibratesNothing) {
  const LedgerEntry autolearned{
      "spam", {{1, 1}}, {std::string(kAutolearnSource), 1}, HeldOutScore{kScoreScale, 0.6}};
  EXPECT_FALSE(FeedbackCellOf(autolearned).has_value());
  EXPECT_TRUE(PlanForget("m1", autolearned, TwoClasses()).feedback_changes.empty());
}

}  // namespace
}  // namespace nbspamd::model
