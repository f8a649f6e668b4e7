// RocksdbStore, its faults: what a failed write stops, how the store says why, and how writes
// come back (Recover, Reopen). The rest of the class is in rocksdb_store.cc and
// rocksdb_store_users.cc.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "model/user_layer.h"
#include "storage/encoding.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_schema.h"
#include "storage/rocksdb_status.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::storage {

WriteHealth RocksdbStore::Health() const {
  std::lock_guard lock(health_mutex_);
  WriteHealth health = health_;
  health.writable = writable_.load();
  if (health.writable) health.reason.clear();
  return health;
}

Error RocksdbStore::StopWrites(std::string_view what, const rocksdb::Status& status, bool count) {
  const WriteFault fault = FaultOf(status).value_or(WriteFault::kIoError);
  std::string reason;
  switch (fault) {
    case WriteFault::kDiskFull: {
      const auto free = FreeBytes(path_);
      reason = "disk full: the file system of data folder " + path_ + " has " +
               (free ? ByteText(*free) : std::string("no space")) +
               " free; training resumes by itself once " +
               (resume_free_bytes_ > 0 ? ByteText(resume_free_bytes_) + " are free"
                                       : std::string("space is freed"));
      break;
    }
    case WriteFault::kReadOnly:
      reason = "read-only file system: data folder " + path_ +
               " takes no writes; training resumes by itself once it is writable again";
      break;
    case WriteFault::kIoError:
      reason = "I/O error in data folder " + path_ + "; training resumes by itself if it clears";
      break;
  }
  {
    std::lock_guard lock(health_mutex_);
    if (count) ++health_.errors[static_cast<std::size_t>(fault)];
    health_.fault = fault;
    health_.reason = reason + " (" + std::string(what) + ": " + status.ToString() + ")";
  }
  writable_.store(false);
  return StoppedError();
}

Error RocksdbStore::StoppedError() const {
  std::lock_guard lock(health_mutex_);
  const ErrorCode code = health_.fault == WriteFault::kDiskFull ? ErrorCode::kInsufficientStorage
                                                                : ErrorCode::kUnavailable;
  return Error{code, "training is paused: " + health_.reason + "; classify goes on"};
}

std::expected<void, Error> RocksdbStore::Recover() {
  std::lock_guard write_lock(write_mutex_);
  if (writable_.load()) return {};
  if (!recoverable_) return std::unexpected(StoppedError());
  if (Health().fault == WriteFault::kDiskFull && resume_free_bytes_ > 0) {
    const auto free = FreeBytes(path_);
    if (free && *free < resume_free_bytes_) return std::unexpected(StoppedError());
  }
  auto reopened = Reopen();
  if (!reopened && reopened.error().code == ErrorCode::kDataLoss) {
    // Memory and disk disagree in a way a reopen cannot explain: only a restart, which loads
    // the model from disk, settles it.
    recoverable_ = false;
    std::lock_guard lock(health_mutex_);
    health_.fault = WriteFault::kIoError;
    health_.reason = reopened.error().message;
  }
  if (!reopened) return reopened;
  {
    std::lock_guard lock(health_mutex_);
    ++health_.recoveries;
    health_.reason.clear();
  }
  writable_.store(true);
  return {};
}

std::expected<void, Error> RocksdbStore::Reopen() {
  std::unique_lock lock(database_mutex_);
  database_.reset();  // Closes it: RocksDB releases its lock on the folder.
  auto database =
      RocksdbDatabase::Open(path_, env_.get(), logger_, RocksdbDatabase::Mode::kReadWrite);
  if (!database) {
    // Keep the ledger readable while writes wait.
    const rocksdb::Status failed = database.error();
    auto read_only =
        RocksdbDatabase::Open(path_, env_.get(), logger_, RocksdbDatabase::Mode::kReadOnly);
    if (read_only) database_ = std::move(*read_only);
    lock.unlock();
    return std::unexpected(StopWrites("reopening the data folder", failed, /*count=*/false));
  }
  database_ = std::move(*database);
  // The write that failed (if any) is now either wholly on disk or not at all: the stats record,
  // written in every batch, tells which, and memory follows. User layers are read again from
  // disk when next needed, and the stream position and user count are read again too (a
  // DeleteUser writes neither stats nor counts).
  auto stored = InitialiseOrCheck(*database_, path_);
  if (!stored) return std::unexpected(stored.error());
  user_cache_.Clear();
  auto users = CountUsers();
  if (!users) return std::unexpected(users.error());
  user_count_.store(*users);
  auto position = GetMeta(database_->db(), database_->family(kMeta), kStreamPositionKey);
  if (!position) return std::unexpected(position.error());
  {
    std::lock_guard position_lock(position_mutex_);
    stream_position_ = position->value_or("");
  }
  const std::shared_ptr<const model::ModelStats> current = cache_.Stats();
  std::optional<InDoubtWrite> in_doubt = std::move(in_doubt_);
  in_doubt_.reset();
  if (*stored == *current) return {};
  if (in_doubt && *stored == in_doubt->resolved.stats) {
    ResolvedDelta& resolved = in_doubt->resolved;
    if (!in_doubt->stream_position.empty()) {
      std::lock_guard position_lock(position_mutex_);
      stream_position_ = in_doubt->stream_position;
    }
    cache_.Publish(resolved.tokens,
                   std::make_shared<const model::ModelStats>(std::move(resolved.stats)));
    if (resolved.feedback) {
      cache_.PublishFeedback(
          std::make_shared<const model::FeedbackHistogram>(std::move(*resolved.feedback)));
    }
    return {};
  }
  return MakeError(ErrorCode::kDataLoss, "after a write fault the model in data folder " + path_ +
                                             " differs from the one in memory; restart nbspamd");
}
}  // namespace nbspamd::storage
