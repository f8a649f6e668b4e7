#include "storage/user_layer_cache.h"

#include <algorithm>

#include "model/user_layer.h"

namespace nbspamd::storage {

bool IsEmptyLayer(const model::ModelStats& stats) {
  return stats.vocabulary_size == 0 &&
         std::all_of(stats.classes.begin(), stats.classes.end(),
                     [](const model::ClassStats& c) { return c.documents == 0 && c.tokens == 0; });
}

UserLayer::UserLayer(std::size_t expected_tokens)
    : stats_(std::make_shared<const model::ModelStats>()), tokens_(expected_tokens) {}

std::optional<model::Snapshot> UserLayer::Read(const model::ModelStats& global,
                                               std::span<const BagEntry> entries) const {
  std::shared_lock lock(mutex_);
  if (IsEmptyLayer(*stats_)) return std::nullopt;
  model::Snapshot snapshot;
  const std::size_t classes = global.classes.size();
  bool same_classes = stats_->classes.size() == classes;
  for (std::size_t c = 0; same_classes && c < classes; ++c) {
    same_classes = stats_->classes[c].label == global.classes[c].label;
  }
  snapshot.stats =
      same_classes
          ? stats_
          : std::make_shared<const model::ModelStats>(model::AlignLayerStats(*stats_, global));
  snapshot.counts.assign(entries.size() * classes, 0);
  const std::span<std::uint64_t> counts(snapshot.counts);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    tokens_.CopyCounts(entries[i].hash, counts.subspan(i * classes, classes));
  }
  return snapshot;
}

std::shared_ptr<const model::ModelStats> UserLayer::Stats() const {
  std::shared_lock lock(mutex_);
  return stats_;
}

TokenCounts UserLayer::Get(TokenHash hash) const {
  std::shared_lock lock(mutex_);
  return tokens_.Get(hash);
}

void UserLayer::Set(std::span<const std::pair<TokenHash, TokenCounts>> tokens,
                    model::ModelStats stats) {
  auto new_stats = std::make_shared<const model::ModelStats>(std::move(stats));
  std::unique_lock lock(mutex_);
  for (const auto& [hash, counts] : tokens) tokens_.Set(hash, counts);
  stats_.swap(new_stats);
  lock.unlock();  // The old stats are freed here, outside the lock.
}

void UserLayer::Load(TokenHash hash, const TokenCounts& counts) { tokens_.Set(hash, counts); }

void UserLayer::LoadStats(model::ModelStats stats) {
  stats_ = std::make_shared<const model::ModelStats>(std::move(stats));
}

std::size_t UserLayer::MemoryBytes() const {
  std::shared_lock lock(mutex_);
  std::size_t bytes = sizeof(UserLayer) + sizeof(model::ModelStats) +
                      stats_->classes.capacity() * sizeof(model::ClassStats);
  for (const model::ClassStats& c : stats_->classes) bytes += c.label.capacity();
  return bytes + tokens_.MemoryBytes();
}

UserLayerCache::UserLayerCache(std::size_t budget_bytes) : budget_bytes_(budget_bytes) {}

std::shared_ptr<UserLayer> UserLayerCache::Find(std::string_view user) {
  std::lock_guard lock(mutex_);
  const auto it = index_.find(user);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->layer;
}

std::uint64_t UserLayerCache::Generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

std::shared_ptr<UserLayer> UserLayerCache::InsertLoaded(const std::string& user,
                                                        std::shared_ptr<UserLayer> layer,
                                                        std::uint64_t generation) {
  std::lock_guard lock(mutex_);
  if (const auto it = index_.find(user); it != index_.end()) return it->second->layer;
  if (generation == generation_) InsertLocked(user, layer);
  return layer;
}

void UserLayerCache::Published(const std::string& user, std::shared_ptr<UserLayer> layer) {
  std::lock_guard lock(mutex_);
  ++generation_;
  if (const auto it = index_.find(user); it != index_.end()) EraseLocked(it->second);
  InsertLocked(user, std::move(layer));
}

void UserLayerCache::Erase(std::string_view user) {
  std::lock_guard lock(mutex_);
  ++generation_;
  if (const auto it = index_.find(user); it != index_.end()) EraseLocked(it->second);
}

void UserLayerCache::Clear() {
  std::lock_guard lock(mutex_);
  ++generation_;
  index_.clear();
  lru_.clear();
  bytes_ = 0;
}

UserLayerCacheFigures UserLayerCache::Figures() const {
  std::lock_guard lock(mutex_);
  return {lru_.size(), bytes_, hits_, misses_, evictions_};
}

void UserLayerCache::InsertLocked(const std::string& user, std::shared_ptr<UserLayer> layer) {
  const std::size_t bytes = layer->MemoryBytes() + sizeof(Entry) + user.capacity() +
                            4 * sizeof(void*);  // The list node and the index entry.
  if (bytes > budget_bytes_) return;
  lru_.push_front(Entry{user, std::move(layer), bytes});
  index_.emplace(lru_.front().user, lru_.begin());
  bytes_ += bytes;
  while (bytes_ > budget_bytes_) {
    ++evictions_;
    EraseLocked(std::prev(lru_.end()));
  }
}

void UserLayerCache::EraseLocked(Lru::iterator entry) {
  bytes_ -= entry->bytes;
  index_.erase(entry->user);
  lru_.erase(entry);
}

}  // namespace nbspamd::storage
