#include "bench/expiry/compact_folder.h"

#include <rocksdb/db.h>

#include <memory>
#include <vector>

namespace nbspamd::bench {

std::expected<void, Error> CompactFolder(const std::string& path) {
  std::vector<std::string> names;
  rocksdb::Status status = rocksdb::DB::ListColumnFamilies(rocksdb::Options(), path, &names);
  if (!status.ok()) return MakeError(ErrorCode::kInternal, path + ": " + status.ToString());
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  status = rocksdb::DB::Open(rocksdb::Options(), path, families, &handles, &raw);
  if (!status.ok()) return MakeError(ErrorCode::kInternal, path + ": " + status.ToString());
  const std::unique_ptr<rocksdb::DB> db(raw);
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    if (status.ok())
      status = db->CompactRange(rocksdb::CompactRangeOptions(), handle, nullptr, nullptr);
  }
  for (rocksdb::ColumnFamilyHandle* handle : handles) (void)db->DestroyColumnFamilyHandle(handle);
  if (!status.ok()) return MakeError(ErrorCode::kInternal, path + ": " + status.ToString());
  return {};
}

}  // namespace nbspamd::bench
