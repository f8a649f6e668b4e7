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
#include <functional>
#include <map>
#include <memory>
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
#include "storage/user_layer_cache.h"

namespace nbspamd::storage {

// What the accepted deltas do to one user's layer: the new full counts of each token they
// touch (empty: gone), sorted by hash, and the layer's new stats (empty stats, IsEmptyLayer:
// the user has no layer any more). `layer` is the user's layer they were resolved against, for
// the store to update after the write.
struct ResolvedUser {
  std::string user;
  std::shared_ptr<UserLayer> layer;
  std::vector<std::pair<TokenHash, TokenCounts>> tokens;
  model::ModelStats stats;
  bool existed = false;  // Whether the user had a layer before the batch.
};

// The new full counts of every token the accepted deltas touch (empty: the token is gone), each
// token once, and the new stats, with each class's token total and |V| kept exact; the new
// feedback histogram when an accepted delta changed it; and each changed user layer.
struct ResolvedDelta {
  std::vector<std::pair<TokenHash, TokenCounts>> tokens;
  model::ModelStats stats;
  std::optional<model::FeedbackHistogram> feedback;
  std::vector<ResolvedUser> users;  // By user id.
};

// The current layer of a user (an empty one when the user has none), for the writer: errors are
// the backend's read errors.
using UserLayerLoader =
    std::function<std::expected<std::shared_ptr<UserLayer>, Error>(const std::string& user)>;

// Thread safety: one thread at a time, and the cache must not be published to while a resolver
// reads it (the store's one writer holds both).
class DeltaResolver {
 public:
  // Starts from the cache's current state. Deltas with a user part read that user's layer
  // through `users` (without one they are refused, kFailedPrecondition); a user part that would
  // take the user past `user_token_limit` distinct tokens (0: no limit) is refused.
  explicit DeltaResolver(const CountCache& cache, UserLayerLoader users = {},
                         std::uint64_t user_token_limit = 0);

  // Resolves `delta` against the state so far and, on success, folds it in.
  // Errors: kDataLoss when a count (a feedback count too, a user's too) would fall below zero or
  // a class index or calibration bin is unknown, or when an earlier delta with the same ledger id
  // (global, or the same user's) failed (this one was planned on the record that one would have
  // written); kInternal when a new class already exists; kInvalidArgument for a bad user id;
  // kResourceExhausted when the user part passes the distinct-token limit; the loader's error.
  // The delta's global and user parts are accepted or refused together. On error the state so
  // far is untouched.
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

  // A user's layer as the accepted deltas leave it.
  struct UserState {
    std::shared_ptr<UserLayer> layer;
    model::ModelStats stats;
    std::unordered_map<TokenHash, TokenCounts> tokens;  // Changed so far, new counts.
    bool existed = false;
    bool changed = false;
  };

  const CountCache& cache_;
  model::ModelStats stats_;
  model::FeedbackHistogram feedback_;
  bool feedback_changed_ = false;
  std::unordered_map<TokenHash, TokenCounts> tokens_;  // Tokens changed so far, new counts.
  std::unordered_set<std::string> failed_ledger_ids_;  // Ledger ids of the deltas that failed.
  UserLayerLoader users_loader_;
  std::uint64_t user_token_limit_;
  std::map<std::string, UserState, std::less<>> users_;
  // user, 0, message id: the user ledger records of the deltas that failed.
  std::unordered_set<std::string> failed_user_ledger_ids_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_RESOLVED_DELTA_H_
