// RocksdbStore: the embedded, durable Store. The whole model is also kept in memory (a
// CountCache loaded at open), so reads never touch the disk; RocksDB is the durable copy.
//
// Layout (docs/STORAGE.md): column family "default" holds meta records (schema_version,
// model_stats, stream_position, calibration), "tokens" the per-token class counts, "ledger" one
// record per learned message id, "sources" the source index. The calibration record (the
// histogram of the ledger's held-out scores) is written in the same batch as the counts; when
// it is missing or of another layout (model/calibration.h changed) Open rebuilds it from the
// ledger, once. Every Apply is one WriteBatch written with sync through the write-ahead
// log, so an acknowledged change survives a crash or kill -9.
#ifndef NBSPAMD_STORAGE_ROCKSDB_STORE_H_
#define NBSPAMD_STORAGE_ROCKSDB_STORE_H_

#include <expected>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "storage/count_cache.h"
#include "storage/store.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace nbspamd::storage {

class RocksdbStore final : public Store {
 public:
  // Opens the model in folder `path`, creating an empty one (classes spam and ham) if there is
  // none, and loads it into memory.
  // Errors: kDataLoss when the folder holds another schema version or corrupt records,
  // kInternal when RocksDB cannot open it (permissions, another process holds its lock).
  [[nodiscard]] static std::expected<std::unique_ptr<RocksdbStore>, Error> Open(
      const std::string& path);

  // Closes the database cleanly.
  ~RocksdbStore() override;

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
  RocksdbStore(std::unique_ptr<rocksdb::DB> db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
               model::ModelStats stats);
  [[nodiscard]] std::expected<void, Error> LoadTokens();
  // Reads the calibration record, or rebuilds it from the ledger (and stores it) when it is
  // missing or of another layout; publishes the fitted calibration.
  [[nodiscard]] std::expected<void, Error> LoadCalibration();

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // Owned; meta, tokens, ledger first.
  CountCache cache_;
  mutable std::mutex position_mutex_;  // Guards stream_position_.
  std::string stream_position_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_STORE_H_
