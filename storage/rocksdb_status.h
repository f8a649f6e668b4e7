// RocksDB's results in the store's terms, for the files of the RocksDB store (rocksdb_store*.cc,
// rocksdb_schema.cc, model_check.cc): Status into Error, the machine faults a failed write
// reports, free space, and reading a meta record. Plain functions; thread-safe.
#ifndef NBSPAMD_STORAGE_ROCKSDB_STATUS_H_
#define NBSPAMD_STORAGE_ROCKSDB_STATUS_H_

#include <rocksdb/db.h>
#include <rocksdb/status.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/store.h"

namespace nbspamd::storage {

// `status` as an Error about `what`: kDataLoss for corruption, kInternal otherwise.
[[nodiscard]] std::unexpected<Error> RocksdbError(std::string_view what,
                                                  const rocksdb::Status& status);

// The fault of the machine behind a failed write, if it is one: RocksDB reports ENOSPC as
// NoSpace, and EROFS and EIO as IOError with strerror's text.
[[nodiscard]] std::optional<WriteFault> FaultOf(const rocksdb::Status& status);

// "12.5 MiB".
[[nodiscard]] std::string ByteText(std::uint64_t bytes);

// The space free to unprivileged users in the file system of `path`; nullopt when unknown.
[[nodiscard]] std::optional<std::uint64_t> FreeBytes(const std::string& path);

// Reads a meta record; nullopt when absent.
[[nodiscard]] std::expected<std::optional<std::string>, Error> GetMeta(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* meta, const char* key);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_STATUS_H_
