// DeltaResolver: what a sequence of Deltas does to the current state, computed before anything
// is written, so that a backend can write the whole effect in one atomic batch and then publish
// it. Each delta is resolved against the state left by the deltas accepted before it.
//
//   DeltaResolver resolver(cache);
//   for (const model::Delta& delta : deltas) results.push_back(resolver.Add(delta));
//   ResolvedDelta resolved = std::move(resolver).Take();  // write it, then cache.Publish(...)
#ifndef NBSPAMD_STORAGE_RESOLVED_DELTA_H_
#define NBSPAMD_STORAGE_RESOLVED_DELTA_H_

#include <expected>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/error.h"
#include "model/delta.h"
#include "model/model_stats.h"
#include "storage/count_cache.h"

namespace nbspamd::storage {

// The new full counts of every token the accepted deltas touch (empty: the token is gone), each
// token once, and the new stats, with each class's token total and |V| kept exact; and the new
// feedback histogram when an accepted delta changed it.
struct ResolvedDelta {
  std::vector<std::pair<TokenHash, TokenCounts>> tokens;
  model::ModelStats stats;
  std::optional<model::FeedbackHistogram> feedback;
};

// Thread safety: one thread at a time, and the cache must not be published to while a resolver
// reads it (the store's one writer holds both).
class DeltaResolver {
 public:
  // Starts from the cache's current state.
  explicit DeltaResolver(const CountCache& cache);

  // Resolves `delta` against the state so far and, on success, folds it in.
  // Errors: kDataLoss when a count (a feedback count too) would fall below zero or a class index
  // or calibration bin is unknown, or when an earlier delta with the same ledger id failed (this
  // one was planned on the record that one would have written); kInternal when a new class already
  // exists. On error the state so far is untouched.
  [[nodiscard]] std::expected<void, Error> Add(const model::Delta& delta);

  // The stats after every accepted delta.
  [[nodiscard]] const model::ModelStats& stats() const { return stats_; }

  // The combined effect of every accepted delta.
  [[nodiscard]] ResolvedDelta Take() &&;

 private:
  // Add without the bookkeeping of failed ledger ids.
  [[nodiscard]] std::expected<void, Error> Resolve(const model::Delta& delta);
  // The counts of `hash` after the accepted deltas.
  [[nodiscard]] TokenCounts CountsOf(TokenHash hash) const;

  const CountCache& cache_;
  model::ModelStats stats_;
  model::FeedbackHistogram feedback_;
  bool feedback_changed_ = false;
  std::unordered_map<TokenHash, TokenCounts> tokens_;  // Tokens changed so far, new counts.
  std::unordered_set<std::string> failed_ledger_ids_;  // Ledger ids of the deltas that failed.
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_RESOLVED_DELTA_H_
