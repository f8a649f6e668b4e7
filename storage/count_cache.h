// CountCache: the in-memory copy of the model (per-token class counts and stats) that serves
// every read, so classification never touches the disk.
#ifndef NBSPAMD_STORAGE_COUNT_CACHE_H_
#define NBSPAMD_STORAGE_COUNT_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/model_stats.h"
#include "model/snapshot.h"
#include "tokenizer/token_bag.h"

namespace nbspamd::storage {

// Per-class counts of one token; index c is class c. May be shorter than the class list (the
// missing classes count 0). An all-zero token is not stored.
using TokenCounts = std::vector<std::uint64_t>;

// Thread safety: Read, Stats and Get from any thread; Publish and Load from one writer at a
// time. Readers never wait for the writer's lock: tokens live in shards with their own
// reader-writer locks, each held only for one lookup, and a sequence number (odd while a
// Publish is under way) lets a reader detect that it overlapped a Publish and read again, so a
// Snapshot is always of one published state.
class CountCache {
 public:
  explicit CountCache(model::ModelStats stats);
  CountCache(const CountCache&) = delete;
  CountCache& operator=(const CountCache&) = delete;

  [[nodiscard]] model::Snapshot Read(std::span<const BagEntry> entries) const;
  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const;

  // The counts of one token (empty when unknown). For the writer, which sees its own state.
  [[nodiscard]] TokenCounts Get(TokenHash hash) const;

  // Makes a new state visible at once: sets each token's counts (empty counts erase it) and the
  // stats.
  void Publish(std::span<const std::pair<TokenHash, TokenCounts>> tokens,
               std::shared_ptr<const model::ModelStats> stats);

  // Sets one token while loading, before any reader exists.
  void Load(TokenHash hash, TokenCounts counts);

  // The number of stored tokens.
  [[nodiscard]] std::size_t TokenCount() const;

 private:
  struct Shard {
    mutable std::shared_mutex mutex;
    std::unordered_map<TokenHash, TokenCounts> counts;
  };
  static constexpr std::size_t kShardCount = 64;

  Shard& ShardOf(TokenHash hash) { return shards_[hash % kShardCount]; }
  const Shard& ShardOf(TokenHash hash) const { return shards_[hash % kShardCount]; }

  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::shared_ptr<const model::ModelStats>> stats_;
  Shard shards_[kShardCount];
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_COUNT_CACHE_H_
