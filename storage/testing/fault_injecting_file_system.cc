#include "storage/testing/fault_injecting_file_system.h"

#include <utility>

namespace nbspamd::storage::testing {
namespace {

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A file that asks its file system before each write-side operation.
class FaultInjectingWritableFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultInjectingWritableFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string name,
                             FaultInjectingFileSystem& file_system)
      : FSWritableFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        file_system_(file_system) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, false); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::Append(data, options, debug);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, false); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::Append(data, options, info, debug);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, std::uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, false); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, options, debug);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, std::uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, false); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, options, info, debug);
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, false); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::Flush(options, debug);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, true); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::Sync(options, debug);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, true); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::Fsync(options, debug);
  }
  rocksdb::IOStatus RangeSync(std::uint64_t offset, std::uint64_t bytes,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* debug) override {
    if (auto status = file_system_.Check(name_, true); !status.ok()) return status;
    return FSWritableFileOwnerWrapper::RangeSync(offset, bytes, options, debug);
  }

 private:
  const std::string name_;
  FaultInjectingFileSystem& file_system_;
};

}  // namespace

FaultInjectingFileSystem::FaultInjectingFileSystem()
    : FileSystemWrapper(rocksdb::FileSystem::Default()) {}

void FaultInjectingFileSystem::Inject(InjectedFault fault, FaultedFiles files,
                                      FaultedOperations operations, std::uint64_t after) {
  std::lock_guard lock(mutex_);
  fault_ = fault;
  files_ = files;
  operations_ = operations;
  after_ = after;
}

rocksdb::IOStatus FaultInjectingFileSystem::Check(const std::string& name, bool is_sync) {
  std::lock_guard lock(mutex_);
  if (fault_ == InjectedFault::kNone) return rocksdb::IOStatus::OK();
  if (files_ == FaultedFiles::kWriteAheadLog && !EndsWith(name, ".log")) {
    return rocksdb::IOStatus::OK();
  }
  if (files_ == FaultedFiles::kTables && !EndsWith(name, ".sst")) return rocksdb::IOStatus::OK();
  if (operations_ == FaultedOperations::kSyncOnly && !is_sync) return rocksdb::IOStatus::OK();
  if (after_ > 0) {
    --after_;
    return rocksdb::IOStatus::OK();
  }
  ++injected_;
  // As RocksDB's POSIX file system reports each errno (env/io_posix.h).
  switch (fault_) {
    case InjectedFault::kNoSpace: {
      rocksdb::IOStatus status = rocksdb::IOStatus::NoSpace("While appending to file", name);
      status.SetRetryable(true);
      return status;
    }
    case InjectedFault::kReadOnly:
      return rocksdb::IOStatus::IOError("While open a file for appending",
                                        name + ": Read-only file system");
    case InjectedFault::kIoError:
    case InjectedFault::kNone:
      break;
  }
  return rocksdb::IOStatus::IOError("While appending to file", name + ": Input/output error");
}

rocksdb::IOStatus FaultInjectingFileSystem::NewWritableFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* debug) {
  if (auto status = Check(name, false); !status.ok()) return status;
  std::unique_ptr<rocksdb::FSWritableFile> file;
  rocksdb::IOStatus status = target()->NewWritableFile(name, options, &file, debug);
  if (status.ok()) {
    *result = std::make_unique<FaultInjectingWritableFile>(std::move(file), name, *this);
  }
  return status;
}

rocksdb::IOStatus FaultInjectingFileSystem::ReopenWritableFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* debug) {
  if (auto status = Check(name, false); !status.ok()) return status;
  std::unique_ptr<rocksdb::FSWritableFile> file;
  rocksdb::IOStatus status = target()->ReopenWritableFile(name, options, &file, debug);
  if (status.ok()) {
    *result = std::make_unique<FaultInjectingWritableFile>(std::move(file), name, *this);
  }
  return status;
}

rocksdb::IOStatus FaultInjectingFileSystem::ReuseWritableFile(
    const std::string& name, const std::string& old_name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* debug) {
  if (auto status = Check(name, false); !status.ok()) return status;
  std::unique_ptr<rocksdb::FSWritableFile> file;
  rocksdb::IOStatus status = target()->ReuseWritableFile(name, old_name, options, &file, debug);
  if (status.ok()) {
    *result = std::make_unique<FaultInjectingWritableFile>(std::move(file), name, *this);
  }
  return status;
}

rocksdb::IOStatus FaultInjectingFileSystem::RenameFile(const std::string& source,
                                                       const std::string& target,
                                                       const rocksdb::IOOptions& options,
                                                       rocksdb::IODebugContext* debug) {
  if (auto status = Check(target, false); !status.ok()) return status;
  return FileSystemWrapper::RenameFile(source, target, options, debug);
}

}  // namespace nbspamd::storage::testing
