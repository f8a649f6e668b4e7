#include "storage/memory_store.h"

#include <algorithm>
#include <tuple>

#include "model/user_layer.h"
#include "storage/resolved_delta.h"

namespace nbspamd::storage {
namespace {

model::ModelStats DefaultStats() {
  model::ModelStats stats;
  for (std::string_view label : kDefaultLabels) stats.classes.push_back({std::string(label), 0, 0});
  return stats;
}

}  // namespace

MemoryStore::MemoryStore(std::uint64_t user_token_limit)
    : user_token_limit_(user_token_limit), cache_(DefaultStats()) {}

model::Snapshot MemoryStore::Read(std::span<const BagEntry> entries) const {
  return cache_.Read(entries);
}

std::shared_ptr<const model::ModelStats> MemoryStore::Stats() const { return cache_.Stats(); }

std::shared_ptr<const model::FeedbackHistogram> MemoryStore::Feedback() const {
  return cache_.Feedback();
}

std::expected<std::optional<model::LedgerEntry>, Error> MemoryStore::FindLearned(
    std::string_view id) const {
  std::lock_guard lock(ledger_mutex_);
  const auto it = ledger_.find(id);
  if (it == ledger_.end()) return std::nullopt;
  return it->second;
}

std::expected<BatchResults, Error> MemoryStore::ApplyBatch(std::span<const model::Delta> deltas) {
  DeltaResolver resolver(
      cache_,
      [this](const std::string& user) -> std::expected<std::shared_ptr<UserLayer>, Error> {
        if (auto layer = FindLayer(user)) return layer;
        return std::make_shared<UserLayer>();
      },
      user_token_limit_);
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
      if (!delta.user) continue;
      const model::UserLayerChange& change = *delta.user;
      if (change.ledger_entry) {
        user_ledgers_[change.user].insert_or_assign(change.ledger_id, *change.ledger_entry);
      } else if (!change.ledger_id.empty()) {
        if (const auto it = user_ledgers_.find(change.user); it != user_ledgers_.end()) {
          it->second.erase(change.ledger_id);
          if (it->second.empty()) user_ledgers_.erase(it);
        }
      }
    }
    for (ResolvedUser& user : resolved.users) {
      const bool empty = IsEmptyLayer(user.stats);
      user.layer->Set(user.tokens, std::move(user.stats));
      if (empty) {
        layers_.erase(user.user);
      } else {
        layers_.insert_or_assign(user.user, user.layer);
      }
    }
  }
  cache_.Publish(resolved.tokens,
                 std::make_shared<const model::ModelStats>(std::move(resolved.stats)));
  if (resolved.feedback) {
    cache_.PublishFeedback(
        std::make_shared<const model::FeedbackHistogram>(std::move(*resolved.feedback)));
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
        found.push_back({id, entry.label, origin, entry.checked});
      }
    }
  }
  std::ranges::sort(found, [](const LearnedMessage& a, const LearnedMessage& b) {
    return std::tie(a.origin.learned_at, a.id) < std::tie(b.origin.learned_at, b.id);
  });
  if (found.size() > limit) found.resize(limit);
  return found;
}

std::expected<std::vector<LearnedRecord>, Error> MemoryStore::NewestLearned(
    std::size_t limit) const {
  std::vector<LearnedRecord> found;
  {
    std::lock_guard lock(ledger_mutex_);
    for (const auto& [id, entry] : ledger_) {
      if (entry.origin.source == model::kAutolearnSource) continue;
      found.push_back({id, entry.label, entry.origin, entry.held_out});
    }
  }
  std::ranges::sort(found, [](const LearnedRecord& a, const LearnedRecord& b) {
    return std::tie(a.origin.learned_at, a.id) > std::tie(b.origin.learned_at, b.id);
  });
  if (found.size() > limit) found.resize(limit);
  return found;
}

std::vector<StorageProperty> MemoryStore::Properties() const { return {}; }

std::shared_ptr<UserLayer> MemoryStore::FindLayer(std::string_view user) const {
  std::lock_guard lock(ledger_mutex_);
  const auto it = layers_.find(user);
  return it == layers_.end() ? nullptr : it->second;
}

std::expected<std::optional<model::Snapshot>, Error> MemoryStore::ReadUser(
    std::string_view user, const model::ModelStats& global,
    std::span<const BagEntry> entries) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  const std::shared_ptr<UserLayer> layer = FindLayer(user);
  if (!layer) return std::nullopt;
  return layer->Read(global, entries);
}

std::expected<std::optional<model::ModelStats>, Error> MemoryStore::UserStats(
    std::string_view user) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  const std::shared_ptr<UserLayer> layer = FindLayer(user);
  if (!layer) return std::nullopt;
  const auto stats = layer->Stats();
  if (IsEmptyLayer(*stats)) return std::nullopt;
  return model::AlignLayerStats(*stats, *cache_.Stats());
}

std::expected<std::vector<UserSummary>, Error> MemoryStore::ListUsers(std::string_view after,
                                                                      std::size_t limit) const {
  std::vector<UserSummary> users;
  std::lock_guard lock(ledger_mutex_);
  for (auto it = layers_.upper_bound(after); it != layers_.end() && users.size() < limit; ++it) {
    const auto stats = it->second->Stats();
    if (IsEmptyLayer(*stats)) continue;
    users.push_back({it->first, model::AlignLayerStats(*stats, *cache_.Stats())});
  }
  return users;
}

std::expected<std::optional<model::LedgerEntry>, Error> MemoryStore::FindUserLearned(
    std::string_view user, std::string_view id) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::lock_guard lock(ledger_mutex_);
  const auto ledger = user_ledgers_.find(user);
  if (ledger == user_ledgers_.end()) return std::nullopt;
  const auto it = ledger->second.find(id);
  if (it == ledger->second.end()) return std::nullopt;
  return it->second;
}

std::expected<std::vector<LearnedMessage>, Error> MemoryStore::ListUserLearned(
    std::string_view user, std::string_view source, std::int64_t since, std::int64_t until,
    std::size_t limit) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::vector<LearnedMessage> found;
  {
    std::lock_guard lock(ledger_mutex_);
    const auto ledger = user_ledgers_.find(user);
    if (ledger == user_ledgers_.end()) return found;
    for (const auto& [id, entry] : ledger->second) {
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

std::expected<std::optional<std::int64_t>, Error> MemoryStore::UserLastLearned(
    std::string_view user) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::lock_guard lock(ledger_mutex_);
  const auto ledger = user_ledgers_.find(user);
  std::optional<std::int64_t> newest;
  if (ledger == user_ledgers_.end()) return newest;
  for (const auto& [id, entry] : ledger->second) {
    newest = std::max(newest.value_or(entry.origin.learned_at), entry.origin.learned_at);
  }
  return newest;
}

std::expected<void, Error> MemoryStore::DeleteUser(std::string_view user,
                                                   std::string_view stream_position) {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::lock_guard lock(ledger_mutex_);
  if (const auto it = layers_.find(user); it != layers_.end()) layers_.erase(it);
  if (const auto it = user_ledgers_.find(user); it != user_ledgers_.end()) user_ledgers_.erase(it);
  if (!stream_position.empty()) stream_position_ = std::string(stream_position);
  return {};
}

UserLayerFigures MemoryStore::UserFigures() const {
  std::lock_guard lock(ledger_mutex_);
  UserLayerFigures figures;
  figures.users = layers_.size();
  figures.cached_layers = layers_.size();
  for (const auto& [user, layer] : layers_) figures.cache_bytes += layer->MemoryBytes();
  return figures;
}

std::expected<void, Error> MemoryStore::Checkpoint(const std::string& path) {
  return MakeError(ErrorCode::kFailedPrecondition,
                   "an in-memory model cannot be backed up to " + path);
}

}  // namespace nbspamd::storage
