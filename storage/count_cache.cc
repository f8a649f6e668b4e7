#include "storage/count_cache.h"

#include <algorithm>
#include <mutex>
#include <thread>

namespace nbspamd::storage {

CountCache::CountCache(model::ModelStats stats)
    : stats_(std::make_shared<const model::ModelStats>(std::move(stats))) {}

model::Snapshot CountCache::Read(std::span<const BagEntry> entries) const {
  model::Snapshot snapshot;
  for (;;) {
    const std::uint64_t before = sequence_.load();
    if (before % 2 == 1) {  // A Publish is under way: it takes microseconds.
      std::this_thread::yield();
      continue;
    }
    snapshot.stats = stats_.load();
    const std::size_t classes = snapshot.stats->classes.size();
    snapshot.counts.assign(entries.size() * classes, 0);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Shard& shard = ShardOf(entries[i].hash);
      std::shared_lock lock(shard.mutex);
      const auto it = shard.counts.find(entries[i].hash);
      if (it == shard.counts.end()) continue;
      const std::size_t n = std::min(classes, it->second.size());
      std::copy_n(it->second.begin(), n, snapshot.counts.begin() + i * classes);
    }
    if (sequence_.load() == before) return snapshot;
  }
}

std::shared_ptr<const model::ModelStats> CountCache::Stats() const { return stats_.load(); }

TokenCounts CountCache::Get(TokenHash hash) const {
  const Shard& shard = ShardOf(hash);
  std::shared_lock lock(shard.mutex);
  const auto it = shard.counts.find(hash);
  return it == shard.counts.end() ? TokenCounts{} : it->second;
}

void CountCache::Publish(std::span<const std::pair<TokenHash, TokenCounts>> tokens,
                         std::shared_ptr<const model::ModelStats> stats) {
  sequence_.fetch_add(1);  // Odd: readers that overlap will read again.
  for (const auto& [hash, counts] : tokens) {
    Shard& shard = ShardOf(hash);
    std::unique_lock lock(shard.mutex);
    if (counts.empty()) {
      shard.counts.erase(hash);
    } else {
      shard.counts.insert_or_assign(hash, counts);
    }
  }
  stats_.store(std::move(stats));
  sequence_.fetch_add(1);
}

void CountCache::Load(TokenHash hash, TokenCounts counts) {
  Shard& shard = ShardOf(hash);
  std::unique_lock lock(shard.mutex);
  shard.counts.insert_or_assign(hash, std::move(counts));
}

std::size_t CountCache::TokenCount() const {
  std::size_t total = 0;
  for (const Shard& shard : shards_) {
    std::shared_lock lock(shard.mutex);
    total += shard.counts.size();
  }
  return total;
}

}  // namespace nbspamd::storage
