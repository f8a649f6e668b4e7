// MemoryStore: a Store that keeps everything in memory and forgets it on exit. For tests and
// throw-away models; it honours the whole Store contract except durability.
#ifndef NBSPAMD_STORAGE_MEMORY_STORE_H_
#define NBSPAMD_STORAGE_MEMORY_STORE_H_

#include <map>
#include <mutex>
#include <string>

#include "storage/count_cache.h"
#include "storage/store.h"

namespace nbspamd::storage {

class MemoryStore final : public Store {
 public:
  // An empty model with the default classes (spam, ham).
  MemoryStore();

  [[nodiscard]] model::Snapshot Read(std::span<const BagEntry> entries) const override;
  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const override;
  [[nodiscard]] std::shared_ptr<const model::Calibration> Calibration() const override;
  [[nodiscard]] std::expected<std::optional<model::LedgerEntry>, Error> FindLearned(
      std::string_view id) const override;
  [[nodiscard]] std::expected<BatchResults, Error> ApplyBatch(
      std::span<const model::Delta> deltas) override;
  [[nodiscard]] std::string StreamPosition() const override;
  [[nodiscard]] std::expected<std::vector<LearnedMessage>, Error> ListLearned(
      std::string_view source, std::int64_t since, std::int64_t until,
      std::size_t limit) const override;
  [[nodiscard]] std::expected<void, Error> Checkpoint(const std::string& path) override;
  [[nodiscard]] std::vector<StorageProperty> Properties() const override;

 private:
  CountCache cache_;
  mutable std::mutex ledger_mutex_;  // Guards ledger_ and stream_position_.
  std::map<std::string, model::LedgerEntry, std::less<>> ledger_;
  std::string stream_position_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_MEMORY_STORE_H_
