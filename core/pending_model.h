// PendingModel: the model as the earlier requests of a training group leave it, before any of
// them is written. The training writer plans a group's requests one after another and writes
// them together; to score a new message against exactly the model that learns it (its held-out
// score, model::HeldOutScore), it reads through this view, which adds the group's planned deltas
// to the store's published state. So the score a message gets does not depend on how the
// requests were grouped: it is the one that applying them one by one, in the writer's order,
// gives.
//
//   PendingModel pending(store);                      // the store's state now
//   model::Snapshot s = pending.Read(bag.entries);    // as the store's Read, in the pending state
//   pending.Fold(delta);                              // a planned delta, in order
//
// Only reads: nothing here writes to the store.
//
// Thread safety: none; the writer thread owns it for one group. The store must not be applied to
// while it lives (the writer is the store's only writer, and applies after planning).
#ifndef NBSPAMD_CORE_PENDING_MODEL_H_
#define NBSPAMD_CORE_PENDING_MODEL_H_

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/delta.h"
#include "model/model_stats.h"
#include "model/snapshot.h"
#include "storage/store.h"

namespace nbspamd::core {

class PendingModel {
 public:
  // Starts from the store's current state.
  explicit PendingModel(const storage::Store& store);

  // The stats of the pending state: classes (those the folded deltas create included), document
  // counts, token totals and |V|.
  [[nodiscard]] const model::ModelStats& stats() const { return stats_; }

  // Adds `delta`'s changes: new classes, document and token counts, and |V| with them. Counts
  // that a delta would drive below zero stop at zero here (storage refuses such a delta whole
  // when it is written).
  void Fold(const model::Delta& delta);

  // The stats and per-class counts of `entries` in the pending state, as Store::Read gives them
  // for the published one.
  [[nodiscard]] model::Snapshot Read(std::span<const BagEntry> entries) const;

 private:
  const storage::Store& store_;
  model::ModelStats stats_;
  // Every token a folded delta changed: its full counts in the pending state, one per class.
  std::unordered_map<TokenHash, std::vector<std::uint64_t>> counts_;
  bool folded_ = false;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_PENDING_MODEL_H_
