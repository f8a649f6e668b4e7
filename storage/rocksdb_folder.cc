#include "storage/rocksdb_folder.h"

#include <rocksdb/options.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "storage/encoding.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_logger.h"
#include "storage/rocksdb_status.h"

namespace nbspamd::storage {

rocksdb::Options ToolOptions() {
  rocksdb::Options options;
  options.info_log = std::make_shared<RocksdbLogger>([](std::string_view line) {
    std::fprintf(stderr, "nbspamd: rocksdb: %.*s\n", static_cast<int>(line.size()), line.data());
  });
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.max_file_opening_threads = kFileOpeningThreads;
  return options;
}

void RocksdbFolder::Close() {
  if (!db) return;
  for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
  handles.clear();
  meta = tokens = ledger = sources = users = base = nullptr;
  db->Close().PermitUncheckedError();
  db.reset();
}

std::expected<void, Error> RocksdbFolder::CreateOptionalFamilies() {
  for (auto [name, handle] : {std::pair{kUsersFamily, &users}, std::pair{kBaseFamily, &base}}) {
    if (*handle != nullptr) continue;
    rocksdb::ColumnFamilyHandle* created = nullptr;
    const rocksdb::Status status =
        db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), name, &created);
    if (!status.ok()) return RocksdbError(std::string("creating the family ") + name, status);
    handles.push_back(created);
    *handle = created;
  }
  return {};
}

std::expected<RocksdbFolder, Error> OpenRocksdbFolder(const std::string& path,
                                                      FolderAccess access) {
  if (!std::filesystem::exists(std::filesystem::path(path) / "CURRENT")) {
    return MakeError(ErrorCode::kNotFound, "no model in " + path);
  }
  const rocksdb::Options options = ToolOptions();
  std::vector<std::string> families;
  if (auto listed = rocksdb::DB::ListColumnFamilies(options, path, &families); !listed.ok()) {
    return RocksdbError("cannot read the column families of " + path, listed);
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : families) descriptors.emplace_back(name, options);
  RocksdbFolder folder;
  rocksdb::DB* raw_db = nullptr;
  const rocksdb::Status status =
      access == FolderAccess::kReadOnly
          ? rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(options), path, descriptors,
                                         &folder.handles, &raw_db)
          : rocksdb::DB::Open(rocksdb::DBOptions(options), path, descriptors, &folder.handles,
                              &raw_db);
  if (!status.ok()) return RocksdbError("cannot open data folder " + path, status);
  folder.db.reset(raw_db);
  for (std::size_t i = 0; i < families.size(); ++i) {
    if (families[i] == rocksdb::kDefaultColumnFamilyName) folder.meta = folder.handles[i];
    if (families[i] == kTokensFamily) folder.tokens = folder.handles[i];
    if (families[i] == kLedgerFamily) folder.ledger = folder.handles[i];
    if (families[i] == kSourcesFamily) folder.sources = folder.handles[i];
    if (families[i] == kUsersFamily) folder.users = folder.handles[i];
    if (families[i] == kBaseFamily) folder.base = folder.handles[i];
  }
  if (folder.meta == nullptr || folder.tokens == nullptr || folder.ledger == nullptr ||
      folder.sources == nullptr) {
    return MakeError(ErrorCode::kDataLoss, "data folder " + path + " lacks a column family");
  }
  return folder;
}

std::expected<model::ModelStats, Error> ReadFolderStats(const RocksdbFolder& folder) {
  std::string version;
  rocksdb::Status status =
      folder.db->Get(rocksdb::ReadOptions(), folder.meta, kSchemaVersionKey, &version);
  if (!status.ok()) return RocksdbError("reading the schema version", status);
  std::uint64_t stored = 0;
  const auto [end, parsed] =
      std::from_chars(version.data(), version.data() + version.size(), stored);
  if (parsed != std::errc() || end != version.data() + version.size() || stored != kSchemaVersion) {
    return MakeError(ErrorCode::kDataLoss,
                     "schema version '" + version + "' is not " + std::to_string(kSchemaVersion) +
                         " (start the daemon on the folder once to upgrade it)");
  }
  std::string stats;
  status = folder.db->Get(rocksdb::ReadOptions(), folder.meta, kModelStatsKey, &stats);
  if (!status.ok()) return RocksdbError("reading the model stats", status);
  return DecodeModelStats(stats);
}

std::expected<std::string, Error> ReadFolderStreamPosition(const std::string& path) {
  auto folder = OpenRocksdbFolder(path, FolderAccess::kReadOnly);
  if (!folder) return std::unexpected(std::move(folder.error()));
  std::string position;
  const rocksdb::Status status =
      folder->db->Get(rocksdb::ReadOptions(), folder->meta, kStreamPositionKey, &position);
  if (status.IsNotFound()) return std::string();
  if (!status.ok()) return RocksdbError("reading the stream position", status);
  return position;
}

}  // namespace nbspamd::storage
