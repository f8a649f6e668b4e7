// CountCache: the in-memory copy of the model (per-token class counts, stats and the fitted
// calibration) that serves every read, so classification never touches the disk.
#ifndef NBSPAMD_STORAGE_COUNT_CACHE_H_
#define NBSPAMD_STORAGE_COUNT_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <utility>
#include <vector>

#include "common/token_bag.h"
#include "model/calibration.h"
#include "model/model_stats.h"
#include "model/snapshot.h"
#include "storage/token_table.h"

namespace nbspamd::storage {

// Thread safety: Read, Stats, Get and Feedback from any thread; Publish, PublishFeedback
// and Load from one writer at a time. Readers never wait for the writer's lock: tokens live in
// shards with their own reader-writer locks, and a sequence number (odd while a Publish is under
// way) lets a reader detect that it overlapped a Publish and read again, so a Snapshot is always
// of one published state. A token's shard is the top bits of its hash, so a bag (sorted by hash)
// meets each shard in one run of a few entries, and Read takes a shard's lock once a run. It
// starts at a different entry each time and wraps around: two threads reading at once would
// otherwise sweep the shards in step and meet in each one's lock. A shard's table grows outside
// its lock (readers keep reading the old slots while the new ones are built) and only the swap
// takes the lock, so growth costs readers no more than one update does; one shard grows at a
// time, so the extra memory is that of one shard.
class CountCache {
 public:
  explicit CountCache(model::ModelStats stats);
  CountCache(const CountCache&) = delete;
  CountCache& operator=(const CountCache&) = delete;

  [[nodiscard]] model::Snapshot Read(std::span<const BagEntry> entries) const;
  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const;
  // The current feedback histogram: an immutable value swapped in whole by PublishFeedback, so
  // a reader never waits and never sees half of one. It starts empty.
  [[nodiscard]] std::shared_ptr<const model::FeedbackHistogram> Feedback() const;
  void PublishFeedback(std::shared_ptr<const model::FeedbackHistogram> feedback);

  // The counts of one token without trailing zeros (empty when unknown). For the writer, which
  // sees its own state.
  [[nodiscard]] TokenCounts Get(TokenHash hash) const;

  // Calls visit(hash, counts) for every stored token, shard by shard, each shard under its shared
  // lock (readers go on; a Publish waits for at most one shard's visit), so `visit` must be quick.
  // Not one published state: a Publish between two shards is seen in the later ones only.
  template <typename Visit>
  void ForEachToken(Visit&& visit) const {
    for (const Shard& shard : shards_) {
      std::shared_lock lock(shard.mutex);
      shard.table.ForEach(visit);
    }
  }

  // Makes a new state visible at once: sets each token's counts (empty counts erase it) and the
  // stats. Any order; sorted by hash (as a ResolvedDelta's are), each shard is locked once.
  void Publish(std::span<const std::pair<TokenHash, TokenCounts>> tokens,
               std::shared_ptr<const model::ModelStats> stats);

  // Makes room for `tokens` tokens in all, so that loading them does not grow any table.
  void Reserve(std::size_t tokens);

  // Sets one token while loading, before any reader exists (all-zero counts erase it).
  void Load(TokenHash hash, const TokenCounts& counts);

  // Load for many tokens at once: their slots are fetched together, so the cache misses of
  // a large model overlap.
  void LoadBatch(std::span<const std::pair<TokenHash, TokenCounts>> tokens);

  // The number of stored tokens.
  [[nodiscard]] std::size_t TokenCount() const;

  // The heap bytes the token tables hold.
  [[nodiscard]] std::size_t MemoryBytes() const;

 private:
  struct Shard {
    mutable std::shared_mutex mutex;
    TokenTable table;
  };
  static constexpr unsigned kShardBits = 6;
  static constexpr std::size_t kShardCount = std::size_t{1} << kShardBits;

  static std::size_t ShardIndex(TokenHash hash) { return hash >> (64 - kShardBits); }
  Shard& ShardOf(TokenHash hash) { return shards_[ShardIndex(hash)]; }
  const Shard& ShardOf(TokenHash hash) const { return shards_[ShardIndex(hash)]; }
  // Grows `shard` so that `new_tokens` more fit, taking its lock only for the swap.
  static void GrowFor(Shard& shard, std::size_t new_tokens);

  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::shared_ptr<const model::ModelStats>> stats_;
  std::atomic<std::shared_ptr<const model::FeedbackHistogram>> feedback_;
  Shard shards_[kShardCount];
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_COUNT_CACHE_H_
