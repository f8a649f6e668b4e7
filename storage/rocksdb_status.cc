#include "storage/rocksdb_status.h"

#include <cstdio>
#include <filesystem>

namespace nbspamd::storage {

std::unexpected<Error> RocksdbError(std::string_view what, const rocksdb::Status& status) {
  const ErrorCode code = status.IsCorruption() ? ErrorCode::kDataLoss : ErrorCode::kInternal;
  return MakeError(code, std::string(what) + ": " + status.ToString());
}

std::optional<WriteFault> FaultOf(const rocksdb::Status& status) {
  if (status.IsNoSpace()) return WriteFault::kDiskFull;
  if (!status.IsIOError()) return std::nullopt;
  if (status.ToString().find("Read-only file system") != std::string::npos) {
    return WriteFault::kReadOnly;
  }
  return WriteFault::kIoError;
}

std::string ByteText(std::uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes < (std::uint64_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < (std::uint64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  }
  return text;
}

std::optional<std::uint64_t> FreeBytes(const std::string& path) {
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(path, error);
  if (error) return std::nullopt;
  return space.available;
}

std::expected<std::optional<std::string>, Error> GetMeta(rocksdb::DB& db,
                                                         rocksdb::ColumnFamilyHandle* meta,
                                                         const char* key) {
  std::string value;
  const rocksdb::Status status = db.Get(rocksdb::ReadOptions(), meta, key, &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return RocksdbError(std::string("reading ") + key, status);
  return value;
}

}  // namespace nbspamd::storage
