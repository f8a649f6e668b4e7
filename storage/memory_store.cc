#include "storage/memory_store.h"

#include <algorithm>
#include <tuple>

#include "storage/resolved_delta.h"

namespace nbspamd::storage {
namespace {

model::ModelStats DefaultStats() {
  model::ModelStats stats;
  for (std::string_view label : kDefaultLabels) stats.classes.push_back({std::string(label), 0, 0});
  return stats;
}

}  // namespace

MemoryStore::MemoryStore() : cache_(DefaultStats()) {}

model::Snapshot MemoryStore::Read(std::span<const BagEntry> entries) const {
  return cache_.Read(entries);
}

std::shared_ptr<const model::ModelStats> MemoryStore::Stats() const { return cache_.Stats(); }

std::shared_ptr<const model::Calibration> MemoryStore::Calibration() const {
  return cache_.Calibration();
}

std::expected<std::optional<model::LedgerEntry>, Error> MemoryStore::FindLearned(
    std::string_view id) const {
  std::lock_guard lock(ledger_mutex_);
  const auto it = ledger_.find(id);
  if (it == ledger_.end()) return std::nullopt;
  return it->second;
}

std::expected<BatchResults, Error> MemoryStore::ApplyBatch(std::span<const model::Delta> deltas) {
  DeltaResolver resolver(cache_);
  BatchResults results;
  results.reserve(deltas.size());
  for (const model::Delta& delta : deltas) results.push_back(resolver.Add(delta));
  ResolvedDelta resolved = std::move(resolver).Take();
  {
    std::lock_guard lock(ledger_mutex_);
    for (std::size_t i = 0; i < deltas.size(); ++i) {
      if (!results[i]) continue;
      const model::Delta& delta = deltas[i];
      if (delta.ledger_entry) {
        ledger_.insert_or_assign(delta.ledger_id, *delta.ledger_entry);
      } else if (!delta.ledger_id.empty()) {
        ledger_.erase(delta.ledger_id);
      }
      if (!delta.stream_position.empty()) stream_position_ = delta.stream_position;
    }
  }
  cache_.Publish(resolved.tokens,
                 std::make_shared<const model::ModelStats>(std::move(resolved.stats)));
  if (resolved.feedback) {
    cache_.PublishCalibration(
        std::make_shared<const model::Calibration>(std::move(*resolved.feedback)));
  }
  return results;
}

std::string MemoryStore::StreamPosition() const {
  std::lock_guard lock(ledger_mutex_);
  return stream_position_;
}

std::expected<std::vector<LearnedMessage>, Error> MemoryStore::ListLearned(
    std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit) const {
  std::vector<LearnedMessage> found;
  {
    std::lock_guard lock(ledger_mutex_);
    for (const auto& [id, entry] : ledger_) {
      const model::LearnOrigin& origin = entry.origin;
      if (origin.source == source && origin.learned_at >= since && origin.learned_at < until) {
        found.push_back({id, entry.label, origin});
      }
    }
  }
  std::ranges::sort(found, [](const LearnedMessage& a, const LearnedMessage& b) {
    return std::tie(a.origin.learned_at, a.id) < std::tie(b.origin.learned_at, b.id);
  });
  if (found.size() > limit) found.resize(limit);
  return found;
}

std::vector<StorageProperty> MemoryStore::Properties() const { return {}; }

std::expected<void, Error> MemoryStore::Checkpoint(const std::string& path) {
  return MakeError(ErrorCode::kFailedPrecondition,
                   "an in-memory model cannot be backed up to " + path);
}

}  // namespace nbspamd::storage
