// Learning: turns a training request into the Delta that storage applies. No I/O.
//
//   auto learned = store.FindLearned(id);              // what the ledger holds, if anything
//   LearnPlan plan = PlanLearn(id, "spam", bag, *learned, *store.Stats());
//   if (plan.status != LearnStatus::kUnchanged) store.Apply(plan.delta);
//
// Training is a sequence of such events; applying them one at a time, in any order, gives the
// same counts as learning the documents in one batch.
#ifndef NBSPAMD_MODEL_LEARNING_H_
#define NBSPAMD_MODEL_LEARNING_H_

#include <optional>
#include <string_view>

#include "common/token_bag.h"
#include "model/delta.h"
#include "model/model_stats.h"

namespace nbspamd::model {

enum class LearnStatus {
  kLearned,    // A new message id: its tokens were added to the class.
  kRelearned,  // The id was learned as another class: its counts moved to the new class.
  kUnchanged,  // The id was already learned as this class: nothing to do.
  kChecked,    // Error-driven training: scored right beyond the margin, recorded, not counted.
};

// Lower-case name of a status ("learned"), as the HTTP API reports it.
[[nodiscard]] std::string_view LearnStatusName(LearnStatus status);

struct LearnPlan {
  LearnStatus status = LearnStatus::kUnchanged;
  Delta delta;  // Empty when status is kUnchanged.
};

// Plans learning `bag` as class `label` under message id `id`. `learned` is the ledger's record
// for `id`, if any. A label that names no class yet creates it. A new record gets `origin`; an
// unchanged one keeps its own. A new id's record gets `held_out` (the score the model gave the
// message just before this learn); a relearned one keeps the held-out score of its first learn,
// under its new label. The delta moves the record's calibration cells (FeedbackCellOf) with it.
//
// `count` false (error-driven training decided the message teaches nothing): the new record is
// only checked (LedgerEntry::checked): no counts, no document, status kChecked; the counts of a
// record it replaces are taken back. A checked record of `label` learned again with `count`
// true is counted then (kLearned, with its first held-out score); with `count` false it is
// kUnchanged.
//
// Autolearn (kAutolearnSource): a learn through it of an id the ledger holds is kUnchanged,
// whatever the label (a label given by anyone else always wins); a learn through another source
// of an id learned through autolearn is kRelearned even with the same label: the record's counts
// become `bag`'s and it takes the new origin (so a rollback of autolearn leaves it).
//
// REQUIRES: label is not empty, `stats` is the model state the delta will be applied to.
[[nodiscard]] LearnPlan PlanLearn(std::string_view id, std::string_view label, const TokenBag& bag,
                                  const std::optional<LedgerEntry>& learned,
                                  const ModelStats& stats, LearnOrigin origin = {},
                                  std::optional<HeldOutScore> held_out = std::nullopt,
                                  bool count = true);

// Plans forgetting the message `id`, whose ledger record is `learned`: removes exactly the
// counts that learning it added (none for a checked record), its calibration cell, and the record.
// REQUIRES: `learned.label` names a class of `stats`, unless the record is checked.
[[nodiscard]] Delta PlanForget(std::string_view id, const LedgerEntry& learned,
                               const ModelStats& stats);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_LEARNING_H_
