// RocksdbFolder: a data folder opened for offline tools (check, repair, dump, restore), with the
// handles of nbspamd's column families by name and RocksDB's default options (no daemon
// settings: those tools read and write whole families, not the daemon's hot paths).
//
// Thread safety: one thread at a time. REQUIRES for a read-write open: no daemon has the folder
// open (RocksDB's lock refuses it: kInternal).
#ifndef NBSPAMD_STORAGE_ROCKSDB_FOLDER_H_
#define NBSPAMD_STORAGE_ROCKSDB_FOLDER_H_

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/model_stats.h"

namespace nbspamd::storage {

struct RocksdbFolder {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // Owned: destroyed with the folder.
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* tokens = nullptr;
  rocksdb::ColumnFamilyHandle* ledger = nullptr;
  rocksdb::ColumnFamilyHandle* sources = nullptr;
  rocksdb::ColumnFamilyHandle* users = nullptr;  // nullptr: a folder without user layers.
  rocksdb::ColumnFamilyHandle* base = nullptr;   // nullptr: a folder without base counts.

  RocksdbFolder() = default;
  RocksdbFolder(RocksdbFolder&&) = default;
  RocksdbFolder& operator=(RocksdbFolder&&) = delete;
  ~RocksdbFolder() { Close(); }

  // Closes the database (idempotent): the handles and db are then empty.
  void Close();

  // Creates the users and base families when the folder lacks them. REQUIRES: read-write.
  [[nodiscard]] std::expected<void, Error> CreateOptionalFamilies();
};

enum class FolderAccess { kReadOnly, kReadWrite };

// RocksDB's default options for the tools, but for its log: warnings and errors to standard
// error, never a LOG file in the folder (storage/rocksdb_logger.h says why).
[[nodiscard]] rocksdb::Options ToolOptions();

// Opens the model in `path`. Errors: kNotFound when `path` holds no RocksDB database, kDataLoss
// when it lacks one of the meta, tokens, ledger and sources families, kInternal when RocksDB
// cannot open it (another process holds its lock, permissions).
[[nodiscard]] std::expected<RocksdbFolder, Error> OpenRocksdbFolder(const std::string& path,
                                                                    FolderAccess access);

// The stats record of an open folder, after checking that its schema version is this build's.
// Errors: kDataLoss for another schema version or an unreadable record, kInternal for I/O.
[[nodiscard]] std::expected<model::ModelStats, Error> ReadFolderStats(const RocksdbFolder& folder);

// The cluster stream position recorded in the model in `path` ("" when none: a model that never
// applied a stream entry), as Store::StreamPosition reads it; the folder is opened read-only (a
// checkpoint, or a daemon's folder before the daemon opens it) and closed again. Errors: those of
// OpenRocksdbFolder, kInternal for I/O.
[[nodiscard]] std::expected<std::string, Error> ReadFolderStreamPosition(const std::string& path);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_FOLDER_H_
