#include "core/verdict_memory.h"

#include <xxhash.h>

#include <algorithm>

namespace nbspamd::core {

VerdictMemory::VerdictMemory(std::size_t capacity)
    : shard_capacity_(std::max<std::size_t>(1, capacity / kShards)) {}

void VerdictMemory::Remember(std::string_view key, bool spam) {
  const std::uint64_t hash = XXH3_64bits(key.data(), key.size());
  Shard& shard = shards_[hash % kShards];
  std::lock_guard lock(shard.mutex);
  if (shard.verdicts.insert_or_assign(hash, spam).second) shard.order.push_back(hash);
  // Forget the oldest; keys taken meanwhile are stale in `order` and skipped.
  while (shard.verdicts.size() > shard_capacity_ && !shard.order.empty()) {
    shard.verdicts.erase(shard.order.front());
    shard.order.pop_front();
  }
  if (shard.order.size() > 2 * shard_capacity_) {
    std::erase_if(shard.order, [&](std::uint64_t h) { return !shard.verdicts.contains(h); });
  }
}

std::optional<bool> VerdictMemory::Take(std::string_view key) {
  const std::uint64_t hash = XXH3_64bits(key.data(), key.size());
  Shard& shard = shards_[hash % kShards];
  std::lock_guard lock(shard.mutex);
  const auto it = shard.verdicts.find(hash);
  if (it == shard.verdicts.end()) return std::nullopt;
  const bool spam = it->second;
  shard.verdicts.erase(it);
  return spam;
}

}  // namespace nbspamd::core
