// RocksdbDatabase: one open RocksDB database of a data folder, with nbspamd's column families in
// a fixed order (meta, tokens, ledger, sources, users, base, seen, then any other the folder
// has) and the
// options the store uses. The destructor closes it. RocksdbStore owns one and swaps it for a fresh
// one when it recovers from a write fault.
//
// Thread safety: db() and family() from any thread while the object lives.
#ifndef NBSPAMD_STORAGE_ROCKSDB_DATABASE_H_
#define NBSPAMD_STORAGE_ROCKSDB_DATABASE_H_

#include <rocksdb/status.h>

#include <cstddef>
#include <expected>
#include <memory>
#include <string>
#include <vector>

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Env;
class Logger;
}  // namespace rocksdb

namespace nbspamd::storage {

// The threads that load a database's table files when it opens (rocksdb::DBOptions::
// max_file_opening_threads), for every database nbspamd opens (the model, the scan history, the
// tools'). RocksDB's default, 16, starts 15 threads for each family with table files at every
// open: 119-134 threads a daemon's start where 35-38 do, which the sanitizer builds pay for at
// each of the thousands of opens of a test suite. Two, as the background jobs; a start-up on 10
// million tokens is as fast (docs/PERFORMANCE.md, "Seventeenth round").
inline constexpr int kFileOpeningThreads = 2;

enum FamilyIndex : std::size_t {
  kMeta = 0,
  kTokens = 1,
  kLedger = 2,
  kSources = 3,
  kUsers = 4,  // Optional: nullptr until created (CreateFamily).
  kBase = 5,   // Optional: nullptr until created (CreateFamily).
  kSeen = 6,   // Optional: nullptr until created (CreateFamily).
};

class RocksdbDatabase {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  // Opens (kReadWrite: creating the folder's missing families) the database in `path`, through
  // `env` (nullptr: RocksDB's default, the POSIX file system), logging to `logger` (never to a
  // LOG file in the folder). kReadOnly writes nothing, so it opens a folder on a full or
  // read-only disk; it needs every family to exist. `users`, `base` and `seen` are not created
  // here: family(kUsers) is nullptr while the folder has no user layers, family(kBase) while it
  // has no base counts, family(kSeen) until a ledger record was retired (CreateFamily).
  // Errors: RocksDB's status, for the caller to judge.
  [[nodiscard]] static std::expected<std::unique_ptr<RocksdbDatabase>, rocksdb::Status> Open(
      const std::string& path, rocksdb::Env* env, std::shared_ptr<rocksdb::Logger> logger,
      Mode mode);

  RocksdbDatabase(const RocksdbDatabase&) = delete;
  RocksdbDatabase& operator=(const RocksdbDatabase&) = delete;
  ~RocksdbDatabase();

  [[nodiscard]] rocksdb::DB& db() const { return *db_; }
  [[nodiscard]] rocksdb::ColumnFamilyHandle* family(FamilyIndex index) const {
    return handles_[index];
  }
  [[nodiscard]] const std::vector<rocksdb::ColumnFamilyHandle*>& families() const {
    return handles_;
  }
  [[nodiscard]] bool read_only() const { return read_only_; }

  // Creates the optional family `index` (kUsers, kBase or kSeen) if it does not exist yet.
  // REQUIRES: no other thread uses this object meanwhile (it changes family(index)); a read-write
  // database.
  [[nodiscard]] std::expected<void, rocksdb::Status> CreateFamily(FamilyIndex index);

 private:
  RocksdbDatabase(std::unique_ptr<rocksdb::DB> db,
                  std::vector<rocksdb::ColumnFamilyHandle*> handles, bool read_only);

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // Owned.
  bool read_only_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_DATABASE_H_
