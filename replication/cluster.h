// Cluster mode: many daemons, one model, through a Redis Stream.
//
// Each daemon keeps its own RocksDB model as a materialised view of one stream of training
// events. A train, forget or rollback is not applied locally first: it is appended to the stream
// (XADD), and every daemon, the one that received it included, reads the stream in order
// (XREAD BLOCK) and applies each event through its TrainingWriter, with the event's stream id as
// the position stored in the same RocksDB write as the counts it produced. So a crash between
// applying and recording is impossible, a restart resumes after the last event written, and
// every daemon applies the same events in the same order to the same state: the same model.
//
//   ClusterReplicator cluster(store, writer, options);
//   if (auto started = cluster.Start(); !started) ...   // e.g. the stream was trimmed past us
//   cluster.Submit(std::move(change), [](std::expected<Replicated, Error> r) { ... });
//
// or, for a SpamFilter: EnableCluster(filter, options).
//
// Events carry the tokens (not the message), so every daemon applies identical tokens whatever
// its tokenizer settings. Each daemon records its applied position in the hash
// "<stream>:positions"; the stream is trimmed (XTRIM MINID) only below the oldest position of the
// daemons seen within the retention window and below what is older than that window, and the
// bound is recorded in "<stream>:trimmed", so a daemon whose model ends before it refuses to
// start instead of silently missing events (docs/SCALING.md). Trimming errs on the side of
// keeping: this daemon's own applied position always holds it back (also when its report could
// not be written); a daemon seen before whose report has vanished from the hash holds it back
// at its last known position until the window has passed since it was last seen; and a round
// whose reads of the stream or the positions failed, or found a report it cannot parse, does
// not trim at all. Those decisions are trim_floor.h's, the reports' format stream_codec.h's.
//
// The cluster's key of the scan header (history/scan_signature.h) is kept in Redis under
// "<stream>:scan-key": the first daemon to start makes it (SET NX), every daemon reads it, so a
// header one daemon wrote holds on all of them. Redis down at start: read when it answers.
#ifndef NBSPAMD_REPLICATION_CLUSTER_H_
#define NBSPAMD_REPLICATION_CLUSTER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/log_throttle.h"
#include "core/spam_filter.h"
#include "core/training_log.h"
#include "core/training_writer.h"
#include "model/delta.h"
#include "model/learning.h"
#include "replication/redis_client.h"
#include "replication/stream_codec.h"
#include "replication/trim_floor.h"
#include "storage/store.h"

namespace nbspamd::replication {

struct ClusterOptions {
  std::string redis_host = "127.0.0.1";  // Without sentinels: the one Redis.
  std::uint16_t redis_port = 6379;
  // With sentinels (not empty): the primary is the one they name for `sentinel_master`, asked
  // again after every broken connection, READONLY error or role that is not master
  // (redis_client.h); redis_host and redis_port are unused.
  std::vector<HostPort> sentinels;
  std::string sentinel_master = "nbspamd";
  std::string redis_password;     // AUTH to Redis when not empty. Never logged.
  std::string sentinel_password;  // AUTH to the sentinels when not empty. Never logged.
  // A train is acknowledged only once WAIT says its event is on this many replicas (0: as soon
  // as the primary has it), and this daemon applies an entry only once it is on that many, so
  // a promoted replica holds every acknowledged event and every applied one (docs/SCALING.md).
  int min_replicas = 0;
  // How long WAIT waits for them; then the train is answered kUnavailable (it may still be
  // applied: a retry with the same id is harmless).
  std::chrono::milliseconds replica_timeout{1000};
  // Read the stream from one of the primary's replicas (chosen by `name`, so daemons spread over
  // them), or from the primary when it has none; writes, position reports, trims and WAIT stay
  // on the primary. An entry read on a replica is on at least that replica, so with
  // min_replicas <= 1 no WAIT is needed before applying it; with more, the reader's WAIT runs
  // on the primary as when reading there. Because a replica's connection does not break when
  // the primary fails over, the primary is asked at every report round whether it still holds
  // this daemon's applied position (stream_behind otherwise).
  bool read_from_replica = false;
  std::string stream = "nbspamd:training";
  std::string name;  // This daemon's name in "<stream>:positions". REQUIRES: not empty.
  // Answer a train or forget only once this daemon has applied it (read your own writes); else,
  // by default, as soon as Redis acknowledged the append.
  bool wait_applied = false;
  // Events stay in the stream at least this long, and positions of daemons not seen for this long
  // no longer hold back trimming.
  std::chrono::seconds retention{24 * 3600};
  // A waiting request is answered kUnavailable when its event is not applied within this.
  std::chrono::milliseconds wait_timeout{30000};
  std::chrono::milliseconds report_interval{1000};  // Position report and status refresh.
  // Trimming, and the reading of every daemon's report (status peers): once per interval, so
  // that N daemons cost the primary N²/interval reads rather than N² a second.
  std::chrono::milliseconds trim_interval{10000};
  std::size_t read_count = 512;  // Entries per XREAD.
  // Given the cluster's key of the scan header (64 hex digits) once it is read (on the calling
  // thread of Start, or later on the reader thread when Redis was down then). None: not read.
  std::function<void(std::string_view key_hex)> scan_key_read;
  // Called once, on the reader thread, when the stream is found trimmed past this daemon's model
  // while it runs (after Start; e.g. it was cut off from Redis for longer than the retention):
  // it then applies nothing more. Unset: only reported (Status().gap). Must be quick.
  std::function<void()> gap_found;

  // Where to connect, from the fields above.
  [[nodiscard]] RedisTarget Target() const;
};

// The cluster's key of the scan header in "<stream>:scan-key" (64 hex digits, 32 bytes from the
// system's random source), made (SET NX) when there is none. Errors: kUnavailable when Redis
// cannot be reached; kDataLoss when what is there is not such a key.
[[nodiscard]] std::expected<std::string, Error> ReadClusterScanKey(RedisClient& redis,
                                                                   const std::string& stream);

// Whether the stream still holds the entry `position` (this daemon's applied position, "" or
// "0-0" before any): kDataLoss when it is neither there nor trimmed (the "<stream>:trimmed" bound
// is below it), i.e. the stream lost events this daemon applied (a failover to a replica that
// lacked them, or a Redis that lost its data). kUnavailable when Redis cannot be asked.
[[nodiscard]] std::expected<void, Error> CheckStreamHolds(RedisClient& redis,
                                                          const std::string& stream,
                                                          const std::string& position);

// The TrainingLog of cluster mode. Thread safety: Submit and Status from any thread; Start and
// Stop from one.
//
// A stream that lost events this daemon applied (CheckStreamHolds, checked at every connection)
// stops the reader: nothing more is applied, trains are answered kUnavailable, Status says
// `stream_behind` (/readyz degraded, a metric), and the check is repeated every few seconds, so
// a restored stream is followed again. Entries numbered after the loss are never applied on top
// of a model holding events the others lack: the daemon is rebuilt from a checkpoint instead.
class ClusterReplicator final : public core::TrainingLog {
 public:
  // `writer` must be the only writer of `store`, and only this replicator may submit to it.
  ClusterReplicator(storage::Store& store, core::TrainingWriter& writer, ClusterOptions options);
  ClusterReplicator(const ClusterReplicator&) = delete;
  ClusterReplicator& operator=(const ClusterReplicator&) = delete;
  ~ClusterReplicator() override;  // Stop().

  // Checks, when Redis answers, that the stream still holds every event after this daemon's
  // position, then starts reading it. Redis being down is not an error: the reader retries.
  // Errors: kFailedPrecondition when the stream was trimmed past this daemon's model (start it
  // from a checkpoint of another daemon instead).
  [[nodiscard]] std::expected<void, Error> Start();

  // Stops reading; waiting requests get kUnavailable. Idempotent.
  void Stop() override;

  // Appends `event` and calls `done` once: with the stream id when Redis has it and, with
  // min_replicas, WAIT reported it on that many replicas (or, with wait_applied, once this
  // daemon has also applied it, with the outcome or the event's own error, e.g. kNotFound for a
  // forget of an unknown id); kUnavailable when Redis cannot be reached, too few replicas
  // confirmed it in time (it may still be applied: a retry with the same id is harmless), the
  // wait timed out, the stream lost what this daemon applied, or the daemon stops. Runs `done` on
  // the caller's thread or on the reader's; `done` must be quick.
  void Submit(core::TrainingChange change, core::ReplicatedDone done) override;

  [[nodiscard]] core::ClusterStatus Status() const override;
  [[nodiscard]] const ClusterOptions& options() const { return options_; }

  // Trains not acknowledged because WAIT found fewer than min_replicas replicas in time.
  [[nodiscard]] std::uint64_t ReplicaWaitFailures() const {
    return replica_wait_failures_.load(std::memory_order_relaxed);
  }

  // Error counters for /metrics; each event is also logged (rate-limited: at most a line a
  // minute per counter, saying how many were held back).
  // Completions passed to Submit that threw when called (a bug in the caller); the reader goes
  // on.
  [[nodiscard]] std::uint64_t CompletionExceptions() const {
    return completion_exceptions_.load(std::memory_order_relaxed);
  }
  // Position-report rounds' failures, one per occurrence: writing this daemon's position (HSET),
  // reading the stream's last entry (XREVRANGE) or the positions (HGETALL) failed, a daemon's
  // report could not be parsed, or a daemon seen before had no report.
  [[nodiscard]] std::uint64_t ReportErrors() const {
    return report_errors_.load(std::memory_order_relaxed);
  }

 private:
  struct Waiter {
    core::ReplicatedDone done;
    std::chrono::steady_clock::time_point deadline;
    // Whether WAIT confirmed the event's replicas (or none are required); until then an outcome
    // of applying it is held in `outcome`, not answered.
    bool replicated = false;
    std::optional<std::expected<core::Replicated, Error>> outcome;
  };
  struct Entry {
    std::string id;
    std::string payload;
    std::string families;  // The learn's token families field, "" when none.
    std::string count;     // The learn's count field: "all" (counted whatever the regime) or "".
  };
  void Run();
  // Applies `entries` in order; false when storage failed and they must be read again.
  bool Apply(const std::vector<Entry>& entries);
  // Checks the trimmed bound against `position`: kFailedPrecondition for a gap.
  // Reads the cluster's key of the scan header into options_.scan_key_read, until it once did.
  void ReadScanKey(RedisClient& redis);
  [[nodiscard]] std::expected<void, Error> CheckNoGap(RedisClient& redis,
                                                      const std::string& position);
  // Writes this daemon's position and reads the stream's last id; with `peers_round` or `trim`
  // also reads every daemon's report (status peers, trimming's floor); with `trim`, trims.
  void Report(RedisClient& redis, bool peers_round, bool trim);
  // The status's reading source, logged when it changes.
  void NoteReadFrom(const RedisClient& reader);
  // With min_replicas: whether what the reader read so far is on enough replicas (a write of
  // this daemon's position, then WAIT on the reader's connection).
  [[nodiscard]] std::expected<bool, Error> ReadIsReplicated(RedisClient& redis);
  // WAIT on the appender for the event just appended; kUnavailable when too few replicas.
  [[nodiscard]] std::expected<void, Error> WaitForReplicas();
  void NoteReportError(const std::string& what);
  void NoteCompletionException() noexcept;
  void Resolve(const std::string& waiter, const std::string& stream_id,
               std::expected<model::LearnStatus, Error> outcome);
  void ExpireWaiters(bool all);
  void Pause(std::chrono::milliseconds duration);

  storage::Store& store_;
  core::TrainingWriter& writer_;
  const ClusterOptions options_;
  const std::string positions_key_;
  const std::string trimmed_key_;
  std::string waiter_prefix_;  // "<name>/<incarnation>/"

  std::mutex append_mutex_;  // Guards appender_ and next_waiter_.
  RedisClient appender_;
  std::uint64_t next_waiter_ = 0;

  mutable std::mutex waiters_mutex_;
  std::map<std::string, Waiter> waiters_;

  mutable std::mutex status_mutex_;  // Guards status_ and peers_read_.
  core::ClusterStatus status_;
  std::chrono::steady_clock::time_point peers_read_;  // When status_.peers was read.

  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;  // Guarded by stop_mutex_.
  std::atomic<bool> gap_ = false;
  std::atomic<bool> behind_ = false;  // The stream lost events this daemon applied.
  bool scan_key_known_ = false;       // Start's, then the reader thread's.

  // The reader thread's own: every daemon seen in the positions hash within the window, as
  // TrimFloor last returned them.
  std::map<std::string, PositionReport> known_peers_;

  std::atomic<std::uint64_t> completion_exceptions_ = 0;
  std::atomic<std::uint64_t> report_errors_ = 0;
  std::atomic<std::uint64_t> replica_wait_failures_ = 0;
  LogThrottle replica_log_;       // Trains refused for want of replicas.
  LogThrottle unreplicated_log_;  // Entries read but not yet applied for want of replicas.
  LogThrottle completion_log_;
  LogThrottle report_log_;

  std::thread thread_;
};

// Cluster mode for `filter` (SpamFilter::EnableReplication with a started ClusterReplicator):
// from now on its trains, forgets and rollbacks go through the stream. Call once, before
// serving. Errors: as ClusterReplicator::Start.
[[nodiscard]] std::expected<void, Error> EnableCluster(core::SpamFilter& filter,
                                                       ClusterOptions options);

}  // namespace nbspamd::replication

#endif  // NBSPAMD_REPLICATION_CLUSTER_H_
