#include "storage/rocksdb_database.h"

#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>

#include <algorithm>

#include "storage/rocksdb_layout.h"

namespace nbspamd::storage {
namespace {

// Turns off RocksDB's own recovery from background errors. After a failed write-ahead log
// append on a full disk, RocksDB 7 starts recovering by itself (its SstFileManager retries as
// soon as the file system reports free space), which writes to the log that failed: an
// assertion in Debian's build, and a recovery racing the store's own. The store alone decides
// when to recover, by reopening (RocksdbStore::Recover).
class NoAutomaticRecovery final : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/, rocksdb::Status bg_error,
                            bool* auto_recovery) override {
    bg_error.PermitUncheckedError();
    *auto_recovery = false;
  }
};

// The base and last-seen families: the ledger retention rewrites the same token records step
// after step, so a record is updated in its memory-table entry where it fits (it nearly always
// does: a count that grows keeps its varint's length) rather than added again beside it.
void ExpiryFamilyOptions(rocksdb::ColumnFamilyOptions& options) {
  options.inplace_update_support = true;
  // A small memory table: its skip list is what a retire step's lookups walk, and one of millions
  // of tokens costs a cache miss a level (bench/expiry_steps_benchmark).
  options.write_buffer_size = std::size_t{8} << 20;
}

}  // namespace

std::expected<std::unique_ptr<RocksdbDatabase>, rocksdb::Status> RocksdbDatabase::Open(
    const std::string& path, rocksdb::Env* env, std::shared_ptr<rocksdb::Logger> logger,
    Mode mode) {
  rocksdb::Options options;
  if (env != nullptr) options.env = env;
  options.info_log = std::move(logger);
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.create_if_missing = mode == Mode::kReadWrite;
  options.create_missing_column_families = mode == Mode::kReadWrite;
  options.IncreaseParallelism(2);
  options.max_file_opening_threads = kFileOpeningThreads;
  // A write-ahead log file goes only once every family with writes in it has flushed them. A family
  // written seldom (the ledger retention's, the meta records) would keep every log since its last
  // flush: past this total, RocksDB flushes the families that hold the oldest log (bench/expiry
  // measured the logs growing to most of the folder without it).
  options.max_total_wal_size = std::uint64_t{128} << 20;
  // One thread writes (the training writer), so concurrent memtable inserts buy nothing; and
  // the tokens family's vector memtable below does not support them.
  options.allow_concurrent_memtable_write = false;
  // No automatic resume after a write error: RocksDB 7's resume writes to a write-ahead log
  // that already failed (an assertion in Debian's build; fixed upstream in 2024). The store
  // recovers by reopening the database instead (RocksdbStore::Recover).
  options.max_bgerror_resume_count = 0;
  options.listeners.push_back(std::make_shared<NoAutomaticRecovery>());

  std::vector<std::string> families;
  if (!rocksdb::DB::ListColumnFamilies(options, path, &families).ok()) families.clear();
  for (const char* required :
       {rocksdb::kDefaultColumnFamilyName.c_str(), kTokensFamily, kLedgerFamily, kSourcesFamily}) {
    if (std::find(families.begin(), families.end(), required) == families.end()) {
      families.emplace_back(required);
    }
  }
  // The users family is created with the first user layer (CreateFamily): a folder without
  // layers keeps exactly the families it had.
  const bool has_users =
      std::find(families.begin(), families.end(), kUsersFamily) != families.end();
  const bool has_base = std::find(families.begin(), families.end(), kBaseFamily) != families.end();
  const bool has_seen = std::find(families.begin(), families.end(), kSeenFamily) != families.end();
  // Meta, tokens, ledger and sources come first, in that order; any other family follows.
  std::stable_partition(families.begin(), families.end(), [](const std::string& name) {
    return name == rocksdb::kDefaultColumnFamilyName;
  });
  std::stable_partition(families.begin() + 1, families.end(),
                        [](const std::string& name) { return name == kTokensFamily; });
  std::stable_partition(families.begin() + 2, families.end(),
                        [](const std::string& name) { return name == kLedgerFamily; });
  std::stable_partition(families.begin() + 3, families.end(),
                        [](const std::string& name) { return name == kSourcesFamily; });
  std::stable_partition(families.begin() + 4, families.end(),
                        [](const std::string& name) { return name == kUsersFamily; });
  std::stable_partition(families.begin() + (has_users ? 5 : 4), families.end(),
                        [](const std::string& name) { return name == kBaseFamily; });
  std::stable_partition(families.begin() + 4 + has_users + has_base, families.end(),
                        [](const std::string& name) { return name == kSeenFamily; });
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : families) {
    rocksdb::ColumnFamilyOptions family_options(options);
    if (name == kTokensFamily) {
      // Token records are only ever read by the full scan at open (the count cache serves every
      // other read), so the tokens memtable can be an unsorted vector: an insert is an append,
      // where the default skip list spent most of the training writer's time (sorted once at
      // flush or scan instead).
      family_options.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
    }
    if (name == kBaseFamily || name == kSeenFamily) ExpiryFamilyOptions(family_options);
    descriptors.emplace_back(name, family_options);
  }

  rocksdb::DB* raw_db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  const rocksdb::DBOptions db_options(options);
  const rocksdb::Status status =
      mode == Mode::kReadWrite
          ? rocksdb::DB::Open(db_options, path, descriptors, &handles, &raw_db)
          : rocksdb::DB::OpenForReadOnly(db_options, path, descriptors, &handles, &raw_db);
  if (!status.ok()) return std::unexpected(status);
  if (!has_users) handles.insert(handles.begin() + kUsers, nullptr);
  if (!has_base) handles.insert(handles.begin() + kBase, nullptr);
  if (!has_seen) handles.insert(handles.begin() + kSeen, nullptr);
  return std::unique_ptr<RocksdbDatabase>(new RocksdbDatabase(
      std::unique_ptr<rocksdb::DB>(raw_db), std::move(handles), mode == Mode::kReadOnly));
}

RocksdbDatabase::RocksdbDatabase(std::unique_ptr<rocksdb::DB> db,
                                 std::vector<rocksdb::ColumnFamilyHandle*> handles, bool read_only)
    : db_(std::move(db)), handles_(std::move(handles)), read_only_(read_only) {}

std::expected<void, rocksdb::Status> RocksdbDatabase::CreateFamily(FamilyIndex index) {
  if (handles_[index] != nullptr) return {};
  rocksdb::ColumnFamilyHandle* handle = nullptr;
  const char* name = index == kUsers ? kUsersFamily : index == kBase ? kBaseFamily : kSeenFamily;
  rocksdb::ColumnFamilyOptions options;
  if (index != kUsers) ExpiryFamilyOptions(options);
  const rocksdb::Status status = db_->CreateColumnFamily(options, name, &handle);
  if (!status.ok()) return std::unexpected(status);
  handles_[index] = handle;
  return {};
}

RocksdbDatabase::~RocksdbDatabase() {
  for (auto* handle : handles_) {
    if (handle != nullptr) db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  }
  db_->Close().PermitUncheckedError();
}

}  // namespace nbspamd::storage
