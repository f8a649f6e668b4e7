// User layers, the model side: planning a user's learn, relearn and forget as changes
// to the user's layer, and the stats a layer is scored with. No I/O.
//
// A train with a user is one Delta: its global part (PlanLearn, only when the event also trains
// the global model) and its user part (AddUserLearn), which storage applies in one atomic write:
//
//   model::LearnPlan plan;                                   // kUnchanged, empty delta
//   if (train_global) plan = model::PlanLearn(id, label, bag, *global_learned, *stats, origin);
//   const auto user_status = model::AddUserLearn(plan.delta, user, id, label, bag,
//                                                *user_learned, *stats, origin);
//   if (plan.status != kUnchanged || user_status != kUnchanged) store.Apply(plan.delta);
//
// Each layer has its own ledger, so each is exact on its own: forgetting a message from a user's
// layer removes exactly what learning it there added, whatever the global model did.
#ifndef NBSPAMD_MODEL_USER_LAYER_H_
#define NBSPAMD_MODEL_USER_LAYER_H_

#include <cstddef>
#include <expected>
#include <optional>
#include <string_view>

#include "common/error.h"
#include "common/token_bag.h"
#include "model/delta.h"
#include "model/learning.h"
#include "model/model_stats.h"
#include "model/snapshot.h"

namespace nbspamd::model {

// The longest user id, in bytes. Do not change lightly: ids are part of storage keys.
inline constexpr std::size_t kMaxUserIdBytes = 256;

// A user id is 1 to kMaxUserIdBytes bytes with no 0 byte (storage ends it with one).
// Errors: kInvalidArgument, naming the rule that fails.
[[nodiscard]] std::expected<void, Error> CheckUserId(std::string_view user);

// Adds to `delta` the user layer's part of learning `bag` as class `label` under message id
// `id`: `learned` is the user's own ledger record for `id`, if any. As PlanLearn, but in the
// user's layer: a new id adds the bag's counts (kLearned), an id of another label moves them
// (kRelearned), an id of this label changes nothing (kUnchanged, delta.user left unset). A label
// of no class is appended to delta.new_classes unless `delta` (its global part, planned on the
// same `stats`) creates it already. A new user record gets `origin`; a relearned one too (the
// source index follows the latest feedback, as in the global ledger). User records never hold a
// held-out score.
// REQUIRES: label not empty; CheckUserId(user); `stats` is the global model state the delta will
// be applied to; delta.user is unset.
[[nodiscard]] LearnStatus AddUserLearn(Delta& delta, std::string_view user, std::string_view id,
                                       std::string_view label, const TokenBag& bag,
                                       const std::optional<LedgerEntry>& learned,
                                       const ModelStats& stats, LearnOrigin origin = {});

// Adds to `delta` forgetting message `id` from the user's layer, whose record there is
// `learned`: exactly the counts learning it added, and the record.
// REQUIRES: learned.label names a class of `stats`; delta.user is unset.
void AddUserForget(Delta& delta, std::string_view user, std::string_view id,
                   const LedgerEntry& learned, const ModelStats& stats);

// The stats ClassifyLayered reads for a layer whose own stats are `layer`: the global classes,
// labels and order, with the layer's documents and tokens (0 for classes the layer has not
// seen: a class created after the layer's last change). vocabulary_size is the layer's.
[[nodiscard]] ModelStats AlignLayerStats(const ModelStats& layer, const ModelStats& global);

// The snapshot of a user with no layer, for a bag of `entries` entries: the global classes with
// no documents and every count 0, with which ClassifyLayered scores exactly as Classify.
[[nodiscard]] Snapshot EmptyLayerSnapshot(const ModelStats& global, std::size_t entries);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_USER_LAYER_H_
