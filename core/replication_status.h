// ReplicationStatus: what a replicated training log (cluster mode) reports about itself, as
// plain values, for readiness (/readyz) and /metrics. The core and the front ends read it
// without knowing how replication works (replication/cluster.h fills it in).
#ifndef NBSPAMD_CORE_REPLICATION_STATUS_H_
#define NBSPAMD_CORE_REPLICATION_STATUS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace nbspamd::core {

// A daemon as the replicated log's shared positions show it.
struct ClusterPeer {
  std::string name;
  std::string position;
  double lag_seconds = 0;       // Behind the log's last entry, by the entries' timestamps.
  double seen_seconds_ago = 0;  // Since it last reported.
};

struct ClusterStatus {
  bool connected = false;
  bool gap = false;  // The log was trimmed past this daemon's model: it stopped.
  // The log lost entries this daemon applied (it ends before, or lacks, its position): stopped.
  bool stream_behind = false;
  std::string stream_behind_reason;  // What was found, when stream_behind.
  std::string applied;               // The last entry applied here ("" before any).
  std::uint64_t applied_ms = 0;  // The time part of `applied` (Unix milliseconds; 0 before any).
  std::string last;              // The log's last entry as last seen ("" when empty or unknown).
  std::string read_from;         // Where the log is read from ("HOST:PORT"; "" before any read).
  bool reading_replica = false;  // Whether that is a replica of the primary.
  double lag_seconds = 0;        // `last` minus `applied` by their timestamps; 0 when caught up.
  std::uint64_t applied_events = 0;         // Entries applied since start.
  std::uint64_t waiting = 0;                // Requests waiting for their event to be applied here.
  std::uint64_t completion_exceptions = 0;  // Completions that threw (a bug in the caller).
  std::uint64_t report_errors = 0;          // Failed position-report rounds.
  std::uint64_t replica_wait_failures = 0;  // Trains refused: too few replicas confirmed them.
  std::vector<ClusterPeer> peers;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_REPLICATION_STATUS_H_
