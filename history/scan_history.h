// ScanHistory: the bounded record of what the daemon classified (docs/API.md, "Scan history"),
// in a RocksDB database of its own (by default the folder `history` in the data folder), apart
// from the model: a fault of the history never touches the model or stops classification.
//
//   auto history = ScanHistory::Open({.path = dir + "/history"});
//   (*history)->Record(std::move(record));   // classify: queued, never waits for the disk
//   auto scan = (*history)->Find(scan_id);   // a retrain: the bag that was classified
//   auto page = (*history)->List({.verdict = "spam", .limit = 50});
//
// Record only queues; one writer thread writes the queue in batches to RocksDB's memory table,
// without its write-ahead log; they reach the disk when that table is flushed: once full, when
// the history closes, and at the latest 10 seconds after the first scan not yet on disk. So a
// crash of the process or the machine may lose the last 10 seconds of scans, never the model (a
// user's deleted scans are on disk before DeleteUser returns). Then the writer drops what is
// beyond the bounds: scans older than max_age_ms and, oldest first, those beyond max_scans, with
// one range deletion a pass (the ids of the written scans are kept in memory, 20 bytes each, so
// the bounds never read scans back). Queued scans are found and listed as soon as Record returns.
//
// Learned state (learned_state.h): RecordLearned notes that a scan's message was learned or
// forgotten, once the training is durable; the state is kept under a key family of its own, one
// small value per scan ever trained, written by the writer thread as the scans are (so
// classification never waits for it) and removed with its scan by the bounds and DeleteUser.
// Find and List show it as ScanSummary::learned as soon as RecordLearned returns. A train by
// message id marks the scans of that message key (RecordLearnedByKey) among the last
// kRememberedKeys scans written, which the writer remembers by a 64-bit hash of user and key.
//
// Clear facts (ScanHistoryOptions::clear_facts_ms): the subject, from domain and recipients a
// scan keeps in clear are replaced by their hash (fact_policy.h, HashClearFacts) once the scan is
// older than that, by the writer's bounds pass; its explaining tokens that show them are shown
// hashed from then on (in the bag log they stay as written until the scan leaves the history).
//
// Thread safety: every method may be called from any thread.
#ifndef NBSPAMD_HISTORY_SCAN_HISTORY_H_
#define NBSPAMD_HISTORY_SCAN_HISTORY_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"
#include "history/bag_log.h"
#include "history/fact_policy.h"
#include "history/learned_state.h"
#include "history/scan_codec.h"
#include "history/scan_id.h"
#include "history/scan_query.h"
#include "history/scan_record.h"
#include "history/scan_signature.h"

namespace rocksdb {
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace nbspamd::history {

struct ScanHistoryOptions {
  std::string path = {};                        // The database folder; created when missing.
  std::uint64_t max_scans = 100'000;            // >= 1.
  std::int64_t max_age_ms = 30LL * 86'400'000;  // >= 1.
  std::size_t queue_limit = 8192;               // Scans waiting for the writer; more are dropped.
  // After this many ms a scan's clear subject, from domain and recipients are hashed (see above);
  // 0: kept as long as the scan. Changes live: SetClearFactsAge.
  std::int64_t clear_facts_ms = 0;
  std::function<std::int64_t()> clock_ms = {};  // Unix time in ms; empty: the system clock.
  // RocksDB's warnings and errors about the history's database, one line each; empty: dropped.
  // RocksDB never writes a LOG file of its own in the folder (storage/rocksdb_logger.h says why).
  std::function<void(std::string_view line)> log = {};
  // A seam for tests: runs on the writer thread before each batch is written, where a fault of
  // the write (out of memory, a bug) would strike; what it throws is handled as such a fault.
  std::function<void()> before_write = {};
};

// What the history has done, for /metrics and /stats. Counters only grow.
struct ScanHistoryFigures {
  std::uint64_t recorded = 0;      // Scans written.
  std::uint64_t dropped = 0;       // Scans not kept: the queue was full, or a write failed.
  std::uint64_t expired = 0;       // Scans removed by the bounds.
  std::uint64_t write_errors = 0;  // Failed writes (their scans are counted in dropped).
  std::uint64_t kept = 0;          // Scans in the history now (written ones).
  // Exceptions the writer thread caught (a bug, or out of memory): noted, and it went on.
  std::uint64_t writer_exceptions = 0;
};

// One page of a listing, newest first. `next` is the cursor of the next page (ScanQuery::before),
// "" when the listing is complete. A page may hold fewer than `limit` scans and still have a
// `next`: a listing reads at most a bounded number of scans per page, so that a filter few scans
// pass answers quickly.
struct ScanPage {
  std::vector<ScanSummary> scans = {};
  std::string next = {};
};

class ScanHistory {
 public:
  // Errors: kInvalidArgument for bounds out of range; kUnavailable when the folder cannot be
  // opened (naming it and RocksDB's reason); kDataLoss for a corrupt database.
  [[nodiscard]] static std::expected<std::unique_ptr<ScanHistory>, Error> Open(
      ScanHistoryOptions options);
  ScanHistory(const ScanHistory&) = delete;
  ScanHistory& operator=(const ScanHistory&) = delete;
  // Writes what is queued, then closes.
  ~ScanHistory();

  // Queues `record` (its summary.scan_id a scan id of scan_id.h, detail.bag sorted) for the
  // writer, encoded on the calling thread; a record whose id is not one is counted as dropped;
  // drops it (and counts it) when queue_limit scans are waiting. Never waits for the disk.
  void Record(const ScanRecord& record);

  // The scan `scan_id`. Errors: kInvalidArgument when it is not a scan id (scan_id.h);
  // kExpired when it has aged out (older than max_age_ms, or than every scan of a history that
  // holds max_scans); kNotFound otherwise (never here: another daemon's, or deleted with its
  // user); kDataLoss or kInternal when it cannot be read.
  [[nodiscard]] std::expected<ScanRecord, Error> Find(std::string_view scan_id) const;

  // The scans `query` asks for, newest first. Errors: kInvalidArgument for a limit out of range
  // or a cursor that is not a scan id; kDataLoss or kInternal as Find.
  [[nodiscard]] std::expected<ScanPage, Error> List(const ScanQuery& query) const;

  // Removes every scan of `user` (queued ones too) and returns how many. Waits for the writer.
  // Errors: kInternal when the database cannot be written.
  [[nodiscard]] std::expected<std::uint64_t, Error> DeleteUser(std::string_view user);
  // DeleteUser without waiting: queued for the writer thread, `done` called there with what
  // DeleteUser would return (also when the history stops first: before it stops). The caller's
  // thread (the training writer's) is free at once.
  using DeleteUserDone = std::function<void(std::expected<std::uint64_t, Error>)>;
  void DeleteUserAsync(std::string user, DeleteUserDone done);

  // Waits until every scan recorded before the call is written and the bounds applied.
  void Flush();

  // Notes that the message of scan `scan_id` was learned or forgotten (`change`, durable): its
  // LearnedState changes (NextLearnedState; nothing when it does not). Reads the scan's state
  // (memory, else one RocksDB read) on the calling thread and queues the write for the writer;
  // never waits for it. A scan that is not in the history is not marked (the writer drops it).
  void RecordLearned(std::string_view scan_id, const LearnedChange& change);
  // RecordLearned for every scan of `user` ("" for the global model's) and `message_key` among the
  // last kRememberedKeys scans written: a train or forget by message id or by the message's bytes.
  // Done on the writer thread after the scans recorded before the call are written; Find and List
  // show it from then on.
  void RecordLearnedByKey(std::string user, std::string message_key, LearnedChange change);
  static constexpr std::size_t kRememberedKeys = 65'536;

  // The age after which clear facts are hashed (ScanHistoryOptions::clear_facts_ms), from the
  // writer's next pass on; 0: never. Any thread.
  void SetClearFactsAge(std::int64_t ms) { clear_facts_ms_.store(ms, std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t ClearFactsAge() const {
    return clear_facts_ms_.load(std::memory_order_relaxed);
  }

  [[nodiscard]] ScanHistoryFigures Figures() const;
  [[nodiscard]] const ScanHistoryOptions& options() const { return options_; }
  // The key the facts and tokens kept as hashes are hashed with (fact_policy.h): made at random
  // when the history was created, kept in it ("k"), the same after every restart.
  [[nodiscard]] const FactKey& fact_key() const { return fact_key_; }
  // The key of the scan header's signatures (scan_signature.h): likewise made at random when the
  // history was created and kept in it ("s").
  [[nodiscard]] const ScanKey& scan_key() const { return scan_key_; }

 private:
  // Work for the writer thread besides the queued scans, done in order with them.
  struct Task {
    std::uint64_t after = 0;  // Runs once this many scans were taken from the queue.
    std::function<void()> run;
  };

  // A written scan's id, as the bounds keep it.
  using KeptId = std::array<char, kScanIdLength>;

  ScanHistory(ScanHistoryOptions options, std::unique_ptr<rocksdb::DB> db,
              std::unique_ptr<BagLog> bags, std::deque<KeptId> kept_ids, bool details_in_db,
              bool learned_in_db, FactKey fact_key, ScanKey scan_key);
  void WriterLoop();
  void WriteBatch(std::vector<EncodedScan>& batch);
  // Starts a flush of what was written to memory only (on the writer thread).
  void Persist();
  void ApplyBounds();
  // Runs `task` on the writer thread after what is queued, and waits for it.
  void RunOnWriter(std::function<void()> task);
  // DeleteUser's work. REQUIRES: on the writer thread.
  std::expected<std::uint64_t, Error> DeleteUserOnWriter(std::string_view user);
  // Adds the ids of `batch`, just written, to kept_ids_ in order.
  void KeepIds(const std::vector<EncodedScan>& batch);
  [[nodiscard]] std::int64_t NowMs() const;
  // The detail of scan `scan_id`, whose summary says it is at `location` in the bag log (none:
  // in RocksDB). Errors: as Find.
  [[nodiscard]] std::expected<ScanDetail, Error> ReadDetail(
      std::string_view scan_id, const std::optional<BagLocation>& location) const;
  // The error for a scan that was in the history and is no longer.
  [[nodiscard]] std::unexpected<Error> AgedOut(std::string_view scan_id) const;
  // Find without the learned state and the clear facts' bound.
  [[nodiscard]] std::expected<ScanRecord, Error> FindStored(std::string_view scan_id) const;
  // A page of `found` (newest first, duplicates dropped, at most `limit`), as List answers.
  [[nodiscard]] static ScanPage PageOf(std::vector<ScanSummary> found, std::size_t limit, bool more,
                                       const std::string& last_examined);
  // The learned state of `scan_id`: the one not yet written, else the stored one.
  [[nodiscard]] std::optional<LearnedState> LearnedOf(std::string_view scan_id) const;
  // The stored one only. REQUIRES: learned_mutex_ held, or a state not pending.
  [[nodiscard]] std::optional<LearnedState> StoredLearned(std::string_view scan_id) const;
  // Writes the learned states not yet written. REQUIRES: on the writer thread (or after it).
  void WriteLearned();
  // Remembers the message keys of `batch`, just written, for RecordLearnedByKey. Writer thread.
  void RememberKeys(const std::vector<EncodedScan>& batch);
  // Hashes the clear facts of the scans older than clear_facts_ms_, a bounded number a pass.
  // REQUIRES: on the writer thread.
  void HashOldFacts();
  // The time before which a scan's clear facts are shown hashed; INT64_MIN when never.
  [[nodiscard]] std::int64_t ClearFactsBefore() const;
  // The scans of a List with query.learned other than "no": driven by the learned states, which
  // are few. Appends to `found`; `more` and `last_examined` as List's.
  [[nodiscard]] std::expected<void, Error> ListLearned(
      const ScanQuery& query, const std::string& hashed, const std::string& low,
      const std::string& high, const std::map<std::string, LearnedState, std::less<>>& pending,
      std::vector<ScanSummary>& found, bool& more, std::string& last_examined) const;

  ScanHistoryOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<BagLog> bags_;  // The scans' details (bag_log.h), in the folder `bags` of path.
  // The writer thread's batch, cleared and reused: a fresh one per batch (about 1 MiB) would be
  // mapped and unmapped each time, a page fault per page.
  std::unique_ptr<rocksdb::WriteBatch> write_;
  // When the first scan not yet on disk was written; none when all are. Writer thread only.
  std::optional<std::chrono::steady_clock::time_point> unpersisted_since_;
  // The ids of the scans in the database, sorted: figures_.kept of them. Writer thread only.
  std::deque<KeptId> kept_ids_;
  // Whether some summaries are of format 1, with their details under keys of their own, which
  // the bounds then remove too. Writer thread only.
  bool details_in_db_ = false;
  const FactKey fact_key_;
  const ScanKey scan_key_;
  std::atomic<std::uint64_t> writer_exceptions_ = 0;  // ScanHistoryFigures::writer_exceptions.
  std::atomic<std::int64_t> clear_facts_ms_ = 0;
  // Where HashOldFacts goes on from ("": the oldest scan). Writer thread only.
  std::string hashed_to_;
  // The last kRememberedKeys scans written, each with the hash of its user and message key: a
  // ring, the oldest overwritten first. A scan written costs one entry's write; a train by
  // message id reads them all (a few tens of microseconds, on the writer). Writer thread only.
  struct RememberedScan {
    std::uint64_t hash = 0;
    KeptId id{};
  };
  std::vector<RememberedScan> remembered_;
  std::size_t remembered_next_ = 0;  // Where the next one goes.
  // Whether the database may hold learned states, which the bounds then remove too (a range
  // deletion less a pass while no scan was ever learned). Writer thread only.
  bool learned_in_db_ = false;

  // Learned states not yet written, each with the version that set it (the writer forgets one
  // once written, unless a newer version came meanwhile).
  struct PendingLearned {
    LearnedState state;
    std::uint64_t version = 0;
  };
  mutable std::mutex learned_mutex_;  // Guards pending_learned_ and learned_versions_.
  std::map<std::string, PendingLearned, std::less<>> pending_learned_;
  std::uint64_t learned_versions_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable wake_;      // The writer: work or stop.
  std::condition_variable progress_;  // Waiters: the writer finished something.
  std::deque<EncodedScan> queue_;     // Recorded, not yet taken by the writer.
  std::vector<EncodedScan> writing_;  // Taken by the writer, not yet written.
  std::deque<Task> tasks_;
  std::uint64_t queued_total_ = 0;  // Scans ever queued.
  std::uint64_t taken_total_ = 0;   // Of those, taken by the writer (or removed from the queue).
  bool stopping_ = false;
  ScanHistoryFigures figures_;
  // The oldest written scan's id ("" when none), for Find's answer: kept_ids_'s first.
  std::string oldest_;

  std::thread writer_;  // Last: starts once everything above exists.
};

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_HISTORY_H_
