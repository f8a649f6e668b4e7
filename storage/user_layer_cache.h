// UserLayer and UserLayerCache: users' layers of counts in memory (docs/STORAGE.md).
//
//   std::shared_ptr<UserLayer> layer = cache.Find(user);     // hit: no disk read
//   if (!layer) {                                            // miss: one prefix scan
//     const std::uint64_t generation = cache.Generation();
//     layer = cache.InsertLoaded(user, LoadFromDisk(user), generation);
//   }
//   std::optional<model::Snapshot> snapshot = layer->Read(global_stats, bag.entries);
#ifndef NBSPAMD_STORAGE_USER_LAYER_CACHE_H_
#define NBSPAMD_STORAGE_USER_LAYER_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/token_bag.h"
#include "model/model_stats.h"
#include "model/snapshot.h"
#include "storage/token_table.h"

namespace nbspamd::storage {

// Whether `stats` are those of a layer with nothing in it (no documents, tokens or vocabulary):
// a user without a layer.
[[nodiscard]] bool IsEmptyLayer(const model::ModelStats& stats);

// One user's layer: its own stats (labels a prefix of the global classes, vocabulary_size the
// user's distinct tokens) and its token counts in a compact TokenTable.
//
// Thread safety: Read, Stats and MemoryBytes from any thread; Set (the store's one writer) takes
// the layer's lock exclusively for the update, so a Read sees the layer before or after it.
class UserLayer {
 public:
  // An empty layer (a user without counts) with room for `expected_tokens` tokens.
  explicit UserLayer(std::size_t expected_tokens = 0);
  UserLayer(const UserLayer&) = delete;
  UserLayer& operator=(const UserLayer&) = delete;

  // The snapshot ClassifyLayered reads for `entries`, with `global`'s classes (counts of classes
  // `global` does not have are left out); nullopt when the layer is empty.
  [[nodiscard]] std::optional<model::Snapshot> Read(const model::ModelStats& global,
                                                    std::span<const BagEntry> entries) const;

  // The layer's own stats (never null).
  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const;

  // The counts of one token without trailing zeros (empty when the user has none).
  [[nodiscard]] TokenCounts Get(TokenHash hash) const;

  // Sets each token's counts (empty erases it) and the stats, as one change.
  void Set(std::span<const std::pair<TokenHash, TokenCounts>> tokens, model::ModelStats stats);

  // Sets one token while the layer is built, before any other thread sees it.
  void Load(TokenHash hash, const TokenCounts& counts);
  void LoadStats(model::ModelStats stats);

  // The heap bytes the layer holds, its table and stats included.
  [[nodiscard]] std::size_t MemoryBytes() const;

 private:
  mutable std::shared_mutex mutex_;
  std::shared_ptr<const model::ModelStats> stats_;  // Guarded by mutex_.
  TokenTable tokens_;                               // Guarded by mutex_.
};

// Monitoring figures of a UserLayerCache.
struct UserLayerCacheFigures {
  std::size_t layers = 0;  // Cached layers (users without a layer included).
  std::size_t bytes = 0;   // Their memory, as UserLayer::MemoryBytes counts it.
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
};

// The users' layers in memory: least recently used first out, so that the cached layers' memory
// stays within a budget. A layer larger than the whole budget is not kept.
//
// Thread safety: every method from any thread (one mutex, held for map and list updates only,
// never for disk reads). Generation() and InsertLoaded let a reader that loaded a layer from disk
// cache it only when no change to any layer was published while it read: a reader never caches
// a layer older than one the writer published.
class UserLayerCache {
 public:
  explicit UserLayerCache(std::size_t budget_bytes);
  UserLayerCache(const UserLayerCache&) = delete;
  UserLayerCache& operator=(const UserLayerCache&) = delete;

  // The cached layer of `user`, made the most recently used; nullptr on a miss (counted).
  [[nodiscard]] std::shared_ptr<UserLayer> Find(std::string_view user);

  // Counts changes published so far (Published, Erase, Clear).
  [[nodiscard]] std::uint64_t Generation() const;

  // Caches `layer`, loaded from disk after Generation() returned `generation`, unless a change
  // was published since or `user` is cached already. Returns the cached layer if there is one,
  // else `layer`.
  std::shared_ptr<UserLayer> InsertLoaded(const std::string& user, std::shared_ptr<UserLayer> layer,
                                          std::uint64_t generation);

  // The writer changed `layer`, the user's current layer: caches it (again) with its new size.
  void Published(const std::string& user, std::shared_ptr<UserLayer> layer);

  // Drops `user`'s layer (its data was deleted); Clear drops every layer.
  void Erase(std::string_view user);
  void Clear();

  [[nodiscard]] UserLayerCacheFigures Figures() const;

 private:
  struct Entry {
    std::string user;
    std::shared_ptr<UserLayer> layer;
    std::size_t bytes = 0;
  };
  using Lru = std::list<Entry>;  // Most recently used first.

  // REQUIRES: mutex_ held.
  void InsertLocked(const std::string& user, std::shared_ptr<UserLayer> layer);
  void EraseLocked(Lru::iterator entry);

  const std::size_t budget_bytes_;
  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<std::string_view, Lru::iterator> index_;  // Views into lru_'s users.
  std::size_t bytes_ = 0;
  std::uint64_t generation_ = 0;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_USER_LAYER_CACHE_H_
