#include "history/scan_history.h"

#include <pthread.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/write_batch.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>

#include "common/handler_guard.h"
#include "history/fact_policy.h"
#include "history/scan_codec.h"
#include "history/scan_history_keys.h"
#include "history/scan_id.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_logger.h"

namespace nbspamd::history {

namespace {

// The key of the hashed facts (fact_policy.h): kFactKeyBytes raw bytes.
constexpr char kFactKeyKey[] = "k";
// The key of the scan header's signatures (scan_signature.h): kScanKeyBytes raw bytes.
constexpr char kScanKeyKey[] = "s";
constexpr std::size_t kMaxBatch = 1024;
// The writer wakes when this many scans wait, or after kWriteDelay: one write (and one pass of
// the bounds) for many scans, not one for each. A write's own cost (a pass of the bounds,
// RocksDB's write, the segment's write call, waking the thread) was half the writer's work with
// batches of 20 ms; queued scans are found and listed all the same.
constexpr std::size_t kWakeAt = 512;
constexpr std::chrono::milliseconds kWriteDelay{100};
// Scans are written without RocksDB's write-ahead log (its CRC and second copy of every byte
// were a third of the writer's work); they reach the disk when the memory table is flushed:
// once full, on close, and at the latest this long after the first scan it holds.
constexpr std::chrono::seconds kPersistDelay{10};
// An idle writer applies the bounds (and hashes old clear facts) this often.
constexpr std::chrono::seconds kIdlePass{60};
// Summaries whose clear facts one pass hashes at most: a history reopened long after holds many.
constexpr std::size_t kMaxHashedPerPass = 4096;

// The hash RecordLearnedByKey finds a scan by: its user and message key.
std::uint64_t UserKeyHash(std::string_view user, std::string_view message_key) {
  return XXH3_64bits_withSeed(message_key.data(), message_key.size(),
                              XXH3_64bits(user.data(), user.size()));
}

rocksdb::WriteOptions UnloggedWrite() {
  rocksdb::WriteOptions options;
  options.disableWAL = true;
  return options;
}

// The memory table's insert hints, one per kind, for the keys of scans only (a kind byte and a
// scan id): the start of a range deletion, one character shorter, is left out. RocksDB 7.8 keeps
// one hint per prefix for its point and its range deletion tables alike, and a hint into the
// other table breaks the skip list.
class KindOfScanKey : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "nbspamd.KindOfScanKey"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override { return {key.data(), 1}; }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() == 1 + kScanIdLength;
  }
};

std::int64_t SystemMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The 32-byte key kept under `name`; made by `make` and kept (synced) when there is none.
template <typename Key>
std::expected<Key, Error> KeptKey(rocksdb::DB& db, const char* name, Key (*make)(),
                                  std::string_view what) {
  Key key{};
  std::string stored;
  const rocksdb::Status read = db.Get(rocksdb::ReadOptions(), name, &stored);
  if (read.ok() && stored.size() == key.size()) {
    std::copy(stored.begin(), stored.end(), key.begin());
    return key;
  }
  if (!read.ok() && !read.IsNotFound()) return RocksError("reading " + std::string(what), read);
  key = make();
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status written = db.Put(
      write_options, name, rocksdb::Slice(reinterpret_cast<const char*>(key.data()), key.size()));
  if (!written.ok()) return RocksError("keeping " + std::string(what), written);
  return key;
}

}  // namespace

std::expected<std::unique_ptr<ScanHistory>, Error> ScanHistory::Open(ScanHistoryOptions options) {
  if (options.max_scans == 0 || options.max_age_ms <= 0 || options.queue_limit == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "scan history: max_scans, max_age and the queue must be at least 1");
  }
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  // RocksDB's log to the daemon's: a LOG file of its own, on a full disk, left RocksDB 7 asserting
  // at close after its first failed write.
  db_options.info_log = std::make_shared<storage::RocksdbLogger>(options.log);
  db_options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  db_options.max_file_opening_threads = storage::kFileOpeningThreads;
  db_options.max_total_wal_size = 64 << 20;
  db_options.write_buffer_size = 32 << 20;
  // Token hashes are random: compressing them costs CPU and saves nothing.
  db_options.compression = rocksdb::kNoCompression;
  // One writer thread: the plain skip list insert, not the concurrent one.
  db_options.allow_concurrent_memtable_write = false;
  // Scans arrive in about the order of their ids: each insert starts from where the last one
  // went (one hint for all keys of a kind) instead of the list's top.
  db_options.memtable_insert_with_hint_prefix_extractor = std::make_shared<KindOfScanKey>();
  // What is written without the log is flushed on close (RocksDB's default, said here because
  // the history depends on it).
  db_options.avoid_flush_during_shutdown = false;
  // The folder first: RocksDB, asked to create it, logs an error about the missing folder.
  std::error_code created;
  std::filesystem::create_directories(options.path, created);
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status status = rocksdb::DB::Open(db_options, options.path, &raw);
  if (!status.ok()) {
    return MakeError(status.IsCorruption() ? ErrorCode::kDataLoss : ErrorCode::kUnavailable,
                     "cannot open the scan history in " + options.path + ": " + status.ToString());
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  // The ids the bounds work from. A key whose id is not one (only a damaged database has one) is
  // not counted; a range deletion of the bounds takes it if it lies among the scans removed.
  std::deque<KeptId> kept_ids;
  bool details_in_db = false;
  bool learned_in_db = false;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(std::string(1, kSummaryKind));
         it->Valid() && it->key().starts_with(std::string_view(&kSummaryKind, 1)); it->Next()) {
      const std::string_view id = it->key().ToStringView().substr(1);
      if (id.size() == kScanIdLength) {
        std::copy(id.begin(), id.end(), kept_ids.emplace_back().begin());
      }
      if (!it->value().empty() &&
          static_cast<std::uint8_t>(it->value()[0]) == kSummaryWithDetailInDb) {
        details_in_db = true;
      }
    }
    if (!it->status().ok()) return RocksError("counting the scans", it->status());
    it->Seek(std::string(1, kLearnedKind));
    learned_in_db = it->Valid() && it->key().starts_with(std::string_view(&kLearnedKind, 1));
  }
  // The keys: made once, when the history is new (or older than keys).
  auto fact_key = KeptKey(*db, kFactKeyKey, NewFactKey, "the key of the hashed facts");
  if (!fact_key) return std::unexpected(std::move(fact_key.error()));
  auto scan_key = KeptKey(*db, kScanKeyKey, NewScanKey, "the key of the scan header");
  if (!scan_key) return std::unexpected(std::move(scan_key.error()));
  auto bags = BagLog::Open(options.path + "/bags");
  if (!bags) return std::unexpected(std::move(bags.error()));
  return std::unique_ptr<ScanHistory>(
      new ScanHistory(std::move(options), std::move(db), std::move(*bags), std::move(kept_ids),
                      details_in_db, learned_in_db, *fact_key, *scan_key));
}

ScanHistory::ScanHistory(ScanHistoryOptions options, std::unique_ptr<rocksdb::DB> db,
                         std::unique_ptr<BagLog> bags, std::deque<KeptId> kept_ids,
                         bool details_in_db, bool learned_in_db, FactKey fact_key, ScanKey scan_key)
    : options_(std::move(options)),
      db_(std::move(db)),
      bags_(std::move(bags)),
      write_(std::make_unique<rocksdb::WriteBatch>()),
      kept_ids_(std::move(kept_ids)),
      details_in_db_(details_in_db),
      fact_key_(fact_key),
      scan_key_(scan_key),
      clear_facts_ms_(options_.clear_facts_ms),
      learned_in_db_(learned_in_db) {
  figures_.kept = kept_ids_.size();
  if (!kept_ids_.empty()) oldest_.assign(kept_ids_.front().begin(), kept_ids_.front().end());
  remembered_.reserve(kRememberedKeys);
  writer_ = std::thread([this] { WriterLoop(); });
  pthread_setname_np(writer_.native_handle(), "history-writer");  // As top -H shows it.
}

ScanHistory::~ScanHistory() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
  WriteLearned();  // What came after the writer's last task.
  // The bags on disk before RocksDB, closing next, flushes the summaries that name them.
  (void)bags_->Sync();
}

std::int64_t ScanHistory::NowMs() const {
  return options_.clock_ms ? options_.clock_ms() : SystemMs();
}

void ScanHistory::Record(const ScanRecord& record) {
  if (!ScanIdTime(record.summary.scan_id)) {
    std::lock_guard lock(mutex_);
    ++figures_.dropped;
    return;
  }
  EncodedScan encoded(record);
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= options_.queue_limit) {
      ++figures_.dropped;
      return;
    }
    queue_.push_back(std::move(encoded));
    ++queued_total_;
    // The first scan wakes an idle writer (which then waits kWriteDelay for more), a full batch
    // one that waits for it; the scans between wake nobody.
    if (queue_.size() != 1 && queue_.size() != kWakeAt) return;
  }
  wake_.notify_one();
}

void ScanHistory::WriterLoop() {
  std::unique_lock lock(mutex_);
  const auto has_work = [this] { return stopping_ || !queue_.empty() || !tasks_.empty(); };
  std::vector<EncodedScan> written;  // The last batch, once written; its capacity is reused.
  for (;;) {
    // Waits for a full batch or a task; a few scans are written after kWriteDelay.
    wake_.wait_for(lock, kWriteDelay,
                   [this] { return stopping_ || queue_.size() >= kWakeAt || !tasks_.empty(); });
    if (!has_work()) {
      if (unpersisted_since_) {
        // Idle with scans only in memory: to disk after kPersistDelay, unless work comes first.
        if (!wake_.wait_until(lock, *unpersisted_since_ + kPersistDelay, has_work)) {
          lock.unlock();
          Persist();
          lock.lock();
        }
      } else if (!wake_.wait_for(lock, kIdlePass, has_work)) {
        // Idle: the age bound and the clear facts' bound still apply.
        lock.unlock();
        (void)GuardStep("history writer", "", writer_exceptions_, [&] {
          ApplyBounds();
          HashOldFacts();
        });
        lock.lock();
      }
      continue;  // Then wait for the batch to fill, as above.
    }
    if (!tasks_.empty() && tasks_.front().after <= taken_total_) {
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      // A fault of the history never stops classification, nor this thread: noted, and the
      // writer goes on with the next scans.
      (void)GuardStep("history writer", "", writer_exceptions_, [&] { task.run(); });
      lock.lock();
    } else if (!queue_.empty()) {
      const std::size_t take = std::min(queue_.size(), kMaxBatch);
      writing_.assign(std::make_move_iterator(queue_.begin()),
                      std::make_move_iterator(queue_.begin() + static_cast<long>(take)));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(take));
      taken_total_ += take;
      lock.unlock();
      const bool written_whole =
          GuardStep("history writer", "", writer_exceptions_, [&] { WriteBatch(writing_); });
      if (!written_whole) {
        std::lock_guard counted(mutex_);
        figures_.dropped += take;  // Some may be in the history: the bounds count them anyway.
      }
      (void)GuardStep("history writer", "", writer_exceptions_, [&] {
        ApplyBounds();
        HashOldFacts();
        const auto now = std::chrono::steady_clock::now();
        if (!unpersisted_since_) {
          unpersisted_since_ = now;
        } else if (now - *unpersisted_since_ >= kPersistDelay) {
          Persist();
        }
      });
      // Freed without the lock, which a classifying thread may be waiting for: a thousand
      // scans' buffers, given back to the allocator's arenas of the threads that made them.
      lock.lock();
      written.swap(writing_);
      lock.unlock();
      written.clear();
      lock.lock();
    } else if (stopping_) {
      return;
    }
    progress_.notify_all();
  }
}

void ScanHistory::Persist() {
  // The bags before the summaries that name them.
  if (!bags_->Sync()) {
    std::lock_guard lock(mutex_);
    ++figures_.write_errors;
  }
  rocksdb::FlushOptions flush;
  flush.wait = false;  // RocksDB's flush thread writes the table; the writer goes on.
  if (!db_->Flush(flush).ok()) {
    std::lock_guard lock(mutex_);
    ++figures_.write_errors;
  }
  unpersisted_since_.reset();
}

void ScanHistory::WriteBatch(std::vector<EncodedScan>& batch) {
  if (options_.before_write) options_.before_write();
  rocksdb::WriteBatch& write = *write_;
  write.Clear();  // Keeps its buffer.
  // The details first: a summary never names a detail that was not written.
  std::string key(1, kSummaryKind);
  std::string value;
  for (const EncodedScan& scan : batch) {
    const BagLocation detail = bags_->Append(scan.id(), scan.detail_bytes());
    key.resize(1);
    key.append(scan.id());
    value.assign(scan.summary());
    AppendDetailLocation(value, detail);
    write.Put(key, value);
  }
  rocksdb::Status status;
  if (auto written = bags_->Write(); !written) {
    status = rocksdb::Status::IOError(written.error().message);
  } else {
    status = db_->Write(UnloggedWrite(), &write);
  }
  if (status.ok()) {
    KeepIds(batch);
    RememberKeys(batch);
  }
  std::lock_guard lock(mutex_);
  if (status.ok()) {
    figures_.recorded += batch.size();
    figures_.kept = kept_ids_.size();
    if (!kept_ids_.empty()) oldest_.assign(kept_ids_.front().begin(), kept_ids_.front().end());
  } else {
    ++figures_.write_errors;
    figures_.dropped += batch.size();
  }
}

void ScanHistory::KeepIds(const std::vector<EncodedScan>& batch) {
  for (const EncodedScan& scan : batch) {
    KeptId id;
    std::copy(scan.id().begin(), scan.id().end(), id.begin());  // Record checked its size.
    // Ids come in about their order: made on several threads, queued a little apart.
    auto at = kept_ids_.end();
    while (at != kept_ids_.begin() && id < *std::prev(at)) --at;
    kept_ids_.insert(at, id);
  }
}

void ScanHistory::ApplyBounds() {
  const std::string age_limit = FirstScanIdAt(NowMs() - options_.max_age_ms);
  KeptId limit;
  std::copy(age_limit.begin(), age_limit.end(), limit.begin());
  const std::size_t over =
      kept_ids_.size() > options_.max_scans ? kept_ids_.size() - options_.max_scans : 0;
  const auto too_old = static_cast<std::size_t>(
      std::lower_bound(kept_ids_.begin(), kept_ids_.end(), limit) - kept_ids_.begin());
  const std::size_t removed = std::max(over, too_old);
  if (removed == 0) return;
  // From the oldest scan to the first one kept: one range tombstone, whatever the count (point
  // deletions, each scan read back for its key, were a third of the writer's work). The ranges
  // of the passes follow one another: RocksDB cuts overlapping ones into pieces that each carry
  // every range over them. A range starts at its first scan's key less the last character: just
  // before it, where no kept scan is (all sort after it), and out of the insert hint's domain
  // (KindOfScanKey).
  rocksdb::WriteBatch write;
  for (const char kind : {kSummaryKind, kDetailKind, kLearnedKind}) {
    if (kind == kDetailKind && !details_in_db_) continue;
    if (kind == kLearnedKind && !learned_in_db_) continue;
    const KeptId& first = kept_ids_.front();
    const std::string begin = Key(kind, std::string_view(first.data(), first.size() - 1));
    const std::string end =
        removed < kept_ids_.size()
            ? Key(kind, std::string_view(kept_ids_[removed].data(), kScanIdLength))
            : std::string(1, static_cast<char>(kind + 1));  // Every scan: the kind's end.
    write.DeleteRange(begin, end);
  }
  if (!db_->Write(UnloggedWrite(), &write).ok()) {
    std::lock_guard lock(mutex_);
    ++figures_.write_errors;
    return;
  }
  kept_ids_.erase(kept_ids_.begin(), kept_ids_.begin() + static_cast<std::ptrdiff_t>(removed));
  std::string oldest;
  if (!kept_ids_.empty()) oldest.assign(kept_ids_.front().begin(), kept_ids_.front().end());
  {
    std::lock_guard lock(mutex_);
    figures_.expired += removed;
    figures_.kept = kept_ids_.size();
    oldest_ = oldest;
  }
  if (!oldest.empty()) bags_->DropBefore(oldest);
}

void ScanHistory::RunOnWriter(std::function<void()> task) {
  std::unique_lock lock(mutex_);
  bool done = false;
  tasks_.push_back({queued_total_, [&] {
                      // Done whatever the task threw (the writer notes it): the caller never
                      // waits for good.
                      struct Done {
                        ScanHistory& history;
                        bool& done;
                        ~Done() {
                          std::lock_guard inner(history.mutex_);
                          done = true;
                        }
                      } mark{*this, done};
                      task();
                    }});
  wake_.notify_one();
  progress_.wait(lock, [&] { return done; });
}

void ScanHistory::Flush() {
  RunOnWriter([] {});
}

std::expected<std::uint64_t, Error> ScanHistory::DeleteUser(std::string_view user) {
  std::expected<std::uint64_t, Error> result = 0;
  RunOnWriter([&] { result = DeleteUserOnWriter(user); });
  return result;
}

void ScanHistory::DeleteUserAsync(std::string user, DeleteUserDone done) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back({queued_total_, [this, user = std::move(user), done = std::move(done)] {
                        std::expected<std::uint64_t, Error> result =
                            MakeError(ErrorCode::kInternal, "deleting the scans failed (logged)");
                        (void)GuardStep("history writer", "", writer_exceptions_,
                                        [&] { result = DeleteUserOnWriter(user); });
                        done(std::move(result));  // A throw here: noted by the writer loop.
                      }});
  }
  wake_.notify_one();
}

std::expected<std::uint64_t, Error> ScanHistory::DeleteUserOnWriter(std::string_view user) {
  std::expected<std::uint64_t, Error> result = 0;
  {
    std::uint64_t removed = 0;
    std::vector<KeptId> removed_ids;
    std::vector<BagLocation> erased;  // Erased together: one sync a segment.
    rocksdb::WriteBatch write;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(std::string(1, kSummaryKind));
         it->Valid() && it->key().starts_with(std::string_view(&kSummaryKind, 1)); it->Next()) {
      const std::string id = it->key().ToString().substr(1);
      auto stored = DecodeScanSummary(id, it->value().ToStringView());
      if (stored && stored->summary.user != user) continue;
      // A summary that cannot be read goes too: nothing could show or retrain it.
      write.Delete(it->key());
      write.Delete(Key(kLearnedKind, id));
      ++removed;
      if (id.size() == kScanIdLength) {
        std::copy(id.begin(), id.end(), removed_ids.emplace_back().begin());
      }
      // Its detail is overwritten, not only unnamed: the user's tokens leave the disk now.
      std::optional<BagLocation> in_log = stored ? stored->detail_location : std::nullopt;
      if (!in_log) {  // Format 1: the detail in RocksDB, its bag maybe in the log.
        write.Delete(Key(kDetailKind, id));
        std::string detail;
        if (db_->Get(rocksdb::ReadOptions(), Key(kDetailKind, id), &detail).ok()) {
          if (auto old = DecodeScanDetail(detail); old) in_log = old->bag_location;
        }
      }
      if (in_log) erased.push_back(*in_log);
    }
    if (!it->status().ok()) {
      result = RocksError("reading the scans", it->status());
      return result;
    }
    if (auto done = bags_->EraseAll(std::move(erased)); !done) {
      result = std::unexpected(std::move(done.error()));
      return result;
    }
    if (removed > 0) {
      // Every table to disk before DeleteUser returns: a user's deleted scans never come back
      // after a crash. Never through the write-ahead log, which the history leaves empty: after
      // a failed log write RocksDB 7 asserts on the next one, and its recovery from a full disk
      // (left on here: the history then resumes by itself) writes tables only.
      rocksdb::Status status = db_->Write(UnloggedWrite(), &write);
      if (status.ok()) status = db_->Flush(rocksdb::FlushOptions());
      if (!status.ok()) {
        result = RocksError("removing a user's scans", status);
        return result;
      }
      unpersisted_since_.reset();
      // In key order, as kept_ids_.
      std::erase_if(kept_ids_, [&](const KeptId& id) {
        return std::binary_search(removed_ids.begin(), removed_ids.end(), id);
      });
    }
    std::vector<std::string> removed_queued;
    std::unique_lock lock(mutex_);
    const auto queued = std::erase_if(queue_, [&](const EncodedScan& scan) {
      auto summary = scan.DecodeSummary();
      const bool remove = !summary || summary->user == user;  // Unreadable goes, as above.
      if (remove) removed_queued.emplace_back(scan.id());
      return remove;
    });
    taken_total_ += queued;  // Never written: as if taken, for the tasks that wait on them.
    figures_.kept = kept_ids_.size();
    oldest_ = kept_ids_.empty() ? std::string()
                                : std::string(kept_ids_.front().begin(), kept_ids_.front().end());
    result = removed + queued;
    lock.unlock();
    // Their learned states not yet written go too.
    std::lock_guard learned(learned_mutex_);
    for (const KeptId& id : removed_ids) {
      if (auto at = pending_learned_.find(std::string_view(id.data(), id.size()));
          at != pending_learned_.end()) {
        pending_learned_.erase(at);
      }
    }
    for (const std::string& id : removed_queued) pending_learned_.erase(id);
  }
  return result;
}

void ScanHistory::RecordLearned(std::string_view scan_id, const LearnedChange& change) {
  if (!ScanIdTime(scan_id)) return;
  {
    std::lock_guard lock(learned_mutex_);
    std::optional<LearnedState> prior;
    if (auto at = pending_learned_.find(scan_id); at != pending_learned_.end()) {
      prior = at->second.state;
    } else {
      prior = StoredLearned(scan_id);
    }
    std::optional<LearnedState> next = NextLearnedState(prior, change);
    if (!next) return;
    pending_learned_.insert_or_assign(std::string(scan_id),
                                      PendingLearned{std::move(*next), ++learned_versions_});
  }
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;  // The destructor writes it.
    tasks_.push_back({queued_total_, [this] { WriteLearned(); }});
  }
  wake_.notify_one();
}

void ScanHistory::RecordLearnedByKey(std::string user, std::string message_key,
                                     LearnedChange change) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    tasks_.push_back(
        {queued_total_, [this, user = std::move(user), message_key = std::move(message_key),
                         change = std::move(change)] {
           const std::uint64_t hash = UserKeyHash(user, message_key);
           std::vector<std::string> ids;
           for (const RememberedScan& scan : remembered_) {
             if (scan.hash == hash) ids.emplace_back(scan.id.begin(), scan.id.end());
           }
           for (const std::string& id : ids) {
             // The hash's scan, still here and truly of that user and key.
             std::string value;
             if (!db_->Get(rocksdb::ReadOptions(), Key(kSummaryKind, id), &value).ok()) {
               continue;
             }
             std::string_view scan_user;
             std::string_view scan_key;
             if (SummaryUserAndKey(value, scan_user, scan_key) && scan_user == user &&
                 scan_key == message_key) {
               RecordLearned(id, change);
             }
           }
         }});
  }
  wake_.notify_one();
}

std::optional<LearnedState> ScanHistory::StoredLearned(std::string_view scan_id) const {
  std::string value;
  if (!db_->Get(rocksdb::ReadOptions(), Key(kLearnedKind, scan_id), &value).ok()) {
    return std::nullopt;
  }
  auto state = DecodeLearnedState(value);
  if (!state) return std::nullopt;
  return std::move(*state);
}

std::optional<LearnedState> ScanHistory::LearnedOf(std::string_view scan_id) const {
  std::lock_guard lock(learned_mutex_);
  if (auto at = pending_learned_.find(scan_id); at != pending_learned_.end()) {
    return at->second.state;
  }
  return StoredLearned(scan_id);
}

void ScanHistory::WriteLearned() {
  std::vector<std::pair<std::string, PendingLearned>> pending;
  {
    std::lock_guard lock(learned_mutex_);
    pending.assign(pending_learned_.begin(), pending_learned_.end());
  }
  if (pending.empty()) return;
  rocksdb::WriteBatch write;
  std::string value;
  for (const auto& [id, learned] : pending) {
    // A scan older than every kept one has aged out meanwhile: its state goes with it.
    if (!kept_ids_.empty() && id < std::string_view(kept_ids_.front().data(), kScanIdLength)) {
      continue;
    }
    value.clear();
    AppendLearnedState(value, learned.state);
    write.Put(Key(kLearnedKind, id), value);
  }
  if (!db_->Write(UnloggedWrite(), &write).ok()) {
    std::lock_guard lock(mutex_);
    ++figures_.write_errors;
    return;  // Kept in memory: the next RecordLearned, or the close, writes them again.
  }
  learned_in_db_ = true;
  if (!unpersisted_since_) unpersisted_since_ = std::chrono::steady_clock::now();
  std::lock_guard lock(learned_mutex_);
  for (const auto& [id, learned] : pending) {
    auto at = pending_learned_.find(id);
    if (at != pending_learned_.end() && at->second.version == learned.version) {
      pending_learned_.erase(at);
    }
  }
}

void ScanHistory::RememberKeys(const std::vector<EncodedScan>& batch) {
  for (const EncodedScan& scan : batch) {
    std::string_view user;
    std::string_view message_key;
    if (!SummaryUserAndKey(scan.summary(), user, message_key)) continue;
    RememberedScan remembered{.hash = UserKeyHash(user, message_key)};
    std::copy(scan.id().begin(), scan.id().end(), remembered.id.begin());
    if (remembered_.size() < kRememberedKeys) {
      remembered_.push_back(remembered);
    } else {
      remembered_[remembered_next_] = remembered;
    }
    remembered_next_ = (remembered_next_ + 1) % kRememberedKeys;
  }
}

std::int64_t ScanHistory::ClearFactsBefore() const {
  const std::int64_t age = clear_facts_ms_.load(std::memory_order_relaxed);
  return age > 0 ? NowMs() - age : INT64_MIN;
}

void ScanHistory::HashOldFacts() {
  const std::int64_t before = ClearFactsBefore();
  if (before == INT64_MIN || kept_ids_.empty()) return;
  const std::string bound = FirstScanIdAt(before);
  std::string from(kept_ids_.front().begin(), kept_ids_.front().end());
  if (hashed_to_ > from) from = hashed_to_;
  if (from >= bound) return;
  rocksdb::WriteBatch write;
  std::string value;
  std::size_t examined = 0;
  std::string next = bound;  // Where the next pass starts: the bound once every scan is done.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string end = Key(kSummaryKind, bound);
  for (it->Seek(Key(kSummaryKind, from)); it->Valid() && it->key().compare(end) < 0; it->Next()) {
    const std::string id = it->key().ToString().substr(1);
    if (examined++ == kMaxHashedPerPass) {
      next = id;
      break;
    }
    auto stored = DecodeScanSummary(id, it->value().ToStringView());
    if (!stored || !HashClearFacts(stored->summary.facts, fact_key_)) continue;
    value.clear();
    AppendScanSummary(value, stored->summary);
    if (stored->detail_location) {
      AppendDetailLocation(value, *stored->detail_location);
    } else {
      value[0] = static_cast<char>(kSummaryWithDetailInDb);
    }
    write.Put(it->key(), value);
  }
  if (!it->status().ok()) return;
  if (write.Count() > 0 && !db_->Write(UnloggedWrite(), &write).ok()) {
    std::lock_guard lock(mutex_);
    ++figures_.write_errors;
    return;
  }
  if (write.Count() > 0 && !unpersisted_since_) {
    unpersisted_since_ = std::chrono::steady_clock::now();
  }
  hashed_to_ = std::move(next);
}

ScanHistoryFigures ScanHistory::Figures() const {
  std::lock_guard lock(mutex_);
  ScanHistoryFigures figures = figures_;
  figures.writer_exceptions = writer_exceptions_.load(std::memory_order_relaxed);
  return figures;
}

}  // namespace nbspamd::history
