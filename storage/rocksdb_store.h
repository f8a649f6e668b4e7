// RocksdbStore: the embedded, durable Store. The whole model is also kept in memory (a
// CountCache loaded at open), so reads never touch the disk; RocksDB is the durable copy.
//
// Layout (docs/STORAGE.md): column family "default" holds meta records (schema_version,
// model_stats, stream_position, calibration), "tokens" the per-token class counts, "ledger" one
// record per learned message id, "sources" the source index. The calibration record (the
// histogram of the ledger's held-out scores) is written in the same batch as the counts; when
// it is missing or of another layout (model/calibration.h changed) Open rebuilds it from the
// ledger, once. "users" holds the user layers (keys by user first), read through a bounded
// UserLayerCache rather than loaded at open. Every Apply is one WriteBatch written with sync
// through the write-ahead log, so an acknowledged change survives a crash or kill -9.
#ifndef NBSPAMD_STORAGE_ROCKSDB_STORE_H_
#define NBSPAMD_STORAGE_ROCKSDB_STORE_H_

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "storage/count_cache.h"
#include "storage/resolved_delta.h"
#include "storage/store.h"
#include "storage/user_layer_cache.h"

namespace rocksdb {
class Env;
class WriteBatch;
class FileSystem;
class Logger;
class Status;
}  // namespace rocksdb

namespace nbspamd::storage {

class RocksdbDatabase;

struct RocksdbStoreOptions {
  // The file system RocksDB writes through; nullptr for the machine's own. A seam for tests,
  // which inject faults (storage/testing/fault_injecting_file_system.h).
  std::shared_ptr<rocksdb::FileSystem> file_system;
  // After a full disk, Recover tries to reopen only once the data folder's file system has this
  // much space free (0: whatever is free).
  std::uint64_t resume_free_bytes = std::uint64_t{4} << 20;
  // Where RocksDB's warnings and errors go (storage/rocksdb_logger.h); empty: nowhere.
  std::function<void(std::string_view line)> log;
  // The most distinct tokens a user's layer may have (0: no limit): a learn past it is refused
  // with kResourceExhausted.
  std::uint64_t user_token_limit = kDefaultUserTokenLimit;
  // The memory the cached user layers may take, in bytes (UserLayerCache).
  std::size_t user_cache_bytes = std::size_t{256} << 20;
};

// Write faults (docs/RELIABILITY.md): a write that fails (ENOSPC, EIO, EROFS) is answered with
// kInsufficientStorage or kUnavailable, stops all further writes (RocksDB 7 must not be sent a
// write after a failed write-ahead-log write), and marks the store not writable; reads go on
// from memory. Recover closes and reopens the database, which replays the log: the failed batch
// is then either wholly on disk or wholly not, and the memory copy is made to agree. If the
// read-write open fails, the database is opened read-only so that ledger reads still work.
class RocksdbStore final : public Store {
 public:
  // Opens the model in folder `path`, creating an empty one (classes spam and ham) if there is
  // none, and loads it into memory. A folder that holds a model but cannot be opened for writing
  // (a full disk, a read-only file system) is opened read-only: the store starts not writable.
  // Errors: kDataLoss when the folder holds another schema version or corrupt records,
  // kInternal when RocksDB cannot open it (permissions, another process holds its lock).
  [[nodiscard]] static std::expected<std::unique_ptr<RocksdbStore>, Error> Open(
      const std::string& path, RocksdbStoreOptions options = {});

  // Closes the database cleanly.
  ~RocksdbStore() override;

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
  [[nodiscard]] std::expected<void, Error> FlushMemoryTables() override;
  [[nodiscard]] std::vector<StorageProperty> Properties() const override;
  [[nodiscard]] WriteHealth Health() const override;
  [[nodiscard]] std::expected<void, Error> Recover() override;
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
  // The in-memory counts (CountCache::ForEachToken): never the database.
  [[nodiscard]] std::expected<void, Error> VisitTokens(const TokenVisitor& visit) const override {
    cache_.ForEachToken(visit);
    return {};
  }
  [[nodiscard]] std::expected<void, Error> Export(ModelVisitor& visitor) const override;
  [[nodiscard]] std::expected<RetireStep, Error> RetireLedger(std::int64_t learned_before,
                                                              std::size_t max_records,
                                                              std::string_view stream_position = "",
                                                              std::string_view from = "") override;
  [[nodiscard]] std::expected<TokenExpiryStep, Error> ExpireTokens(
      const TokenExpiryRule& rule, TokenHash from, std::size_t max_examined,
      std::optional<TokenHash> until = std::nullopt,
      std::string_view stream_position = "") override;
  [[nodiscard]] std::expected<ExpiryCandidates, Error> FindExpiryCandidates(
      const TokenExpiryRule& rule) const override;
  [[nodiscard]] std::expected<std::optional<std::int64_t>, Error> NthNewestLearned(
      std::uint64_t n) const override;
  [[nodiscard]] std::expected<std::vector<std::string>, Error> RetireStepStarts(
      std::int64_t learned_before, std::size_t records_per_step, bool users,
      std::size_t max_starts = 0) const override;
  [[nodiscard]] std::expected<RetireStep, Error> RetireUserLedgers(
      std::int64_t learned_before, std::size_t max_records, std::string_view stream_position = "",
      std::string_view from = "") override;
  [[nodiscard]] std::expected<UserTokenExpiryStep, Error> ExpireUserTokens(
      const TokenExpiryRule& rule, std::string_view from, std::size_t max_examined,
      const std::optional<std::string>& until = std::nullopt,
      std::string_view stream_position = "") override;

 private:
  // What a write that failed would have made of the model: the memory copy takes it if the
  // reopened database shows the write landed after all.
  struct InDoubtWrite {
    ResolvedDelta resolved;
    std::string stream_position;
  };

  RocksdbStore(std::string path, std::shared_ptr<rocksdb::Env> env,
               std::shared_ptr<rocksdb::Logger> logger, std::unique_ptr<RocksdbDatabase> database,
               model::ModelStats stats, const RocksdbStoreOptions& options);
  [[nodiscard]] std::expected<void, Error> LoadTokens();
  // ApplyBatch's work. REQUIRES: write_mutex_ held. `extra`, when set, adds its own records to
  // the batch (the token expiry's deletions of base and last-seen records). `sync`: whether the
  // write waits for the disk (a model expiry step need not: it is redone after a crash that loses
  // it).
  [[nodiscard]] std::expected<BatchResults, Error> ApplyBatchLocked(
      std::span<const model::Delta> deltas,
      const std::function<void(const RocksdbDatabase&, rocksdb::WriteBatch&, const BatchResults&)>&
          extra = {},
      bool sync = true);
  // REQUIRES: database_mutex_ held (shared). Calls `each(hash, seen)` for every token `rule`
  // selects but for its seen_before (`seen`: its last-seen time), from token `from` on in key
  // order and before `until`, through at most `max_examined` base records (0: all); returns the
  // hash to go on from, nullopt at the end. `each` returns false to stop there.
  [[nodiscard]] std::expected<std::optional<TokenHash>, Error> ScanExpiryCandidates(
      const TokenExpiryRule& rule, TokenHash from, std::size_t max_examined,
      std::optional<TokenHash> until,
      const std::function<bool(TokenHash, const TokenCounts&, std::int64_t)>& each,
      std::uint64_t* examined) const;
  // Reads the calibration record, or rebuilds it from the ledger (and stores it, when
  // writable) when it is missing or of another layout; publishes the fitted calibration.
  [[nodiscard]] std::expected<void, Error> LoadCalibration();
  // Stops writes after `status` failed `what` (counted as a write error when `count`); returns
  // the error to answer with.
  [[nodiscard]] Error StopWrites(std::string_view what, const rocksdb::Status& status,
                                 bool count = true);
  // The error writes get while stopped.
  [[nodiscard]] Error StoppedError() const;
  // REQUIRES: write_mutex_ held. Opens the database again and makes memory agree with it.
  [[nodiscard]] std::expected<void, Error> Reopen();
  // REQUIRES: database_mutex_ held (shared), database_ not null. `user`'s layer as the database
  // holds it (an empty one when the user has none): one iterator scan from its stats record
  // through its token records (adjacent keys), so one point in time and no read a token.
  [[nodiscard]] std::expected<std::shared_ptr<UserLayer>, Error> LoadUser(
      std::string_view user) const;
  // `user`'s layer from the cache, or loaded (and cached) on a miss. For readers.
  [[nodiscard]] std::expected<std::shared_ptr<UserLayer>, Error> CachedUser(
      std::string_view user) const;
  // REQUIRES: database_mutex_ held. The number of users with a stats record: two seeks a user.
  [[nodiscard]] std::expected<std::uint64_t, Error> CountUsers() const;

  const std::string path_;
  const std::shared_ptr<rocksdb::Env> env_;  // nullptr: RocksDB's default.
  const std::shared_ptr<rocksdb::Logger> logger_;
  const std::uint64_t resume_free_bytes_;
  const std::uint64_t user_token_limit_;
  std::mutex write_mutex_;  // Serialises ApplyBatch and Recover.
  // Guards the database_ pointer: shared while it is used, exclusive to swap it (Recover).
  mutable std::shared_mutex database_mutex_;
  std::unique_ptr<RocksdbDatabase> database_;  // nullptr when not even a read-only open works.
  CountCache cache_;
  mutable std::mutex position_mutex_;  // Guards stream_position_.
  std::string stream_position_;
  std::optional<InDoubtWrite> in_doubt_;  // Guarded by write_mutex_.
  bool recoverable_ = true;               // Guarded by write_mutex_.
  std::atomic<bool> writable_{true};
  mutable std::mutex health_mutex_;  // Guards health_ (but for `writable`, which is writable_).
  WriteHealth health_;
  mutable UserLayerCache user_cache_;
  std::atomic<std::uint64_t> user_count_{0};  // Users with a layer; changed by the writer.
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_STORE_H_
