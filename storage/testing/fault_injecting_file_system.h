// FaultInjectingFileSystem: a test double at RocksDB's file system seam (the LevelDB/RocksDB
// practice of a fault-injecting Env). It passes everything to the machine's file system and,
// once armed, fails chosen write-side operations the way a full disk (ENOSPC), a failing disk
// (EIO) or a read-only remount (EROFS) does, until cleared.
//
//   auto fs = std::make_shared<FaultInjectingFileSystem>();
//   RocksdbStoreOptions options;
//   options.file_system = fs;
//   auto store = RocksdbStore::Open(path, options);
//   fs->Inject(InjectedFault::kNoSpace, FaultedFiles::kWriteAheadLog);  // the next WAL append
//   fails
//   ...
//   fs->Clear();                                                        // space is back
//
// Thread-safe: RocksDB calls it from its own threads while the test arms and clears it.
#ifndef NBSPAMD_STORAGE_TESTING_FAULT_INJECTING_FILE_SYSTEM_H_
#define NBSPAMD_STORAGE_TESTING_FAULT_INJECTING_FILE_SYSTEM_H_

#include <rocksdb/file_system.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace nbspamd::storage::testing {

enum class InjectedFault { kNone, kNoSpace, kIoError, kReadOnly };

// Which files' writes fail.
enum class FaultedFiles {
  kAll,            // Every file RocksDB writes.
  kWriteAheadLog,  // *.log only.
  kTables,         // *.sst only (flushes and compactions).
};

// Which operations fail.
enum class FaultedOperations {
  kAll,       // Creating or renaming a file, and appending to, flushing or syncing one.
  kSyncOnly,  // Only Sync/Fsync: the bytes were written, the sync failed.
};

class FaultInjectingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  // Over the machine's own file system (rocksdb::FileSystem::Default()).
  FaultInjectingFileSystem();

  const char* Name() const override { return "FaultInjectingFileSystem"; }

  // From now on, after `after` more matching operations have succeeded, every matching
  // operation fails with `fault` (kNone: none does).
  void Inject(InjectedFault fault, FaultedFiles files = FaultedFiles::kAll,
              FaultedOperations operations = FaultedOperations::kAll, std::uint64_t after = 0);
  // The fault is gone: everything succeeds again.
  void Clear() { Inject(InjectedFault::kNone); }

  // Operations failed since construction.
  [[nodiscard]] std::uint64_t injected() const { return injected_.load(); }

  // For the wrapped files: the error `operation` on `name` gets now, ok when none.
  [[nodiscard]] rocksdb::IOStatus Check(const std::string& name, bool is_sync);

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& name, const std::string& old_name,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus RenameFile(const std::string& source, const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* debug) override;

 private:
  std::mutex mutex_;  // Guards the plan below.
  InjectedFault fault_ = InjectedFault::kNone;
  FaultedFiles files_ = FaultedFiles::kAll;
  FaultedOperations operations_ = FaultedOperations::kAll;
  std::uint64_t after_ = 0;
  std::atomic<std::uint64_t> injected_{0};
};

}  // namespace nbspamd::storage::testing

#endif  // NBSPAMD_STORAGE_TESTING_FAULT_INJECTING_FILE_SYSTEM_H_
