// MemoryStore: a Store that keeps everything in memory and forgets it on exit. For tests and
// throw-away models; it honours the whole Store contract except durability. It keeps every user
// layer in memory, without a bound.
#ifndef NBSPAMD_STORAGE_MEMORY_STORE_H_
#define NBSPAMD_STORAGE_MEMORY_STORE_H_

#include <map>
#include <mutex>
#include <string>

#include "storage/count_cache.h"
#include "storage/store.h"
#include "storage/user_layer_cache.h"

namespace nbspamd::storage {

class MemoryStore final : public Store {
 public:
  // An empty model with the default classes (spam, ham), users limited to `user_token_limit`
  // distinct tokens each (0: no limit).
  explicit MemoryStore(std::uint64_t user_token_limit = kDefaultUserTokenLimit);

  [[nodiscard]] model::Snapshot Read(std::span<const BagEntry> entries) const override;
  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const override;
  [[nodiscard]] std::shared_ptr<const model::FeedbackHistogram> Feedback() const override;
  [[nodiscard]] std::expected<std::optional<model::LedgerEntry>, Error> FindLearned(
      std::string_view id) const override;
  [[nodiscard]] std::expected<BatchResults, Error> ApplyBatch(
      std::span<const model::Delta> deltas) override;
  [[nodiscard]] std::string StreamPosition() const override;
  [[nodiscard]] std::expected<std::vector<LearnedRecord>, Error> NewestLearned(
      std::size_t limit) const override;
  [[nodiscard]] std::expected<std::vector<LearnedMessage>, Error> ListLearned(
      std::string_view source, std::int64_t since, std::int64_t until,
      std::size_t limit) const override;
  [[nodiscard]] std::expected<void, Error> Checkpoint(const std::string& path) override;
  [[nodiscard]] std::vector<StorageProperty> Properties() const override;
  [[nodiscard]] std::expected<std::optional<model::Snapshot>, Error> ReadUser(
      std::string_view user, const model::ModelStats& global,
      std::span<const BagEntry> entries) const override;
  [[nodiscard]] std::expected<std::vector<UserSummary>, Error> ListUsers(
      std::string_view after, std::size_t limit) const override;
  [[nodiscard]] std::expected<std::optional<model::ModelStats>, Error> UserStats(
      std::string_view user) const override;
  [[nodiscard]] std::expected<std::optional<model::LedgerEntry>, Error> FindUserLearned(
      std::string_view user, std::string_view id) const override;
  [[nodiscard]] std::expected<std::vector<LearnedMessage>, Error> ListUserLearned(
      std::string_view user, std::string_view source, std::int64_t since, std::int64_t until,
      std::size_t limit) const override;
  [[nodiscard]] std::expected<std::optional<std::int64_t>, Error> UserLastLearned(
      std::string_view user) const override;
  [[nodiscard]] std::expected<void, Error> DeleteUser(
      std::string_view user, std::string_view stream_position = "") override;
  [[nodiscard]] UserLayerFigures UserFigures() const override;
  [[nodiscard]] std::expected<void, Error> VisitTokens(const TokenVisitor& visit) const override {
    cache_.ForEachToken(visit);
    return {};
  }

 private:
  using Ledger = std::map<std::string, model::LedgerEntry, std::less<>>;

  // The user's layer, or nullptr when it has none.
  [[nodiscard]] std::shared_ptr<UserLayer> FindLayer(std::string_view user) const;

  const std::uint64_t user_token_limit_;
  CountCache cache_;
  mutable std::mutex ledger_mutex_;  // Guards ledger_, stream_position_, layers_, user_ledgers_.
  Ledger ledger_;
  std::string stream_position_;
  std::map<std::string, std::shared_ptr<UserLayer>, std::less<>> layers_;  // Non-empty layers.
  std::map<std::string, Ledger, std::less<>> user_ledgers_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_MEMORY_STORE_H_
