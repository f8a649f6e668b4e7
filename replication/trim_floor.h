// How much of the training stream may be forgotten: the trim floor of one position-report round,
// and whether a daemon's model ends inside what was trimmed. Pure functions of plain values (no
// Redis, no clock), so that the decisions that lose events for good are tested case by case
// (trim_floor_test.cc); ClusterReplicator (cluster.h) does the reading and the trimming.
//
//   TrimRound round{.now_ms = now, .retention_ms = window, .self = "d1", .applied = applied,
//                   .stream_read = true, .reports = reports, .known = known};
//   TrimDecision decision = TrimFloor(round);
//   known = std::move(decision.known);                      // for the next round
//   if (decision.floor) ... XTRIM MINID decision.floor     // entries below it may go
//
// The rules, all erring on the side of keeping:
// - Nothing younger than the retention window goes: the floor is at most "<now - window>-0".
// - Nothing that a daemon seen within the window has not applied goes: the floor is at most the
//   oldest position of the reports written within the window, this daemon's own applied position
//   included whatever its report says (it may not have been written).
// - A daemon seen within the window in an earlier round whose report has vanished from the hash
//   (the hash was edited, or Redis lost it) holds the stream back at the position it last
//   reported, until the window has passed since it was last seen.
// - A round that could not read the stream or the positions, or found a report it cannot parse,
//   trims nothing: whose position it is, and how recent, is unknown; it might need anything.
#ifndef NBSPAMD_REPLICATION_TRIM_FLOOR_H_
#define NBSPAMD_REPLICATION_TRIM_FLOOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replication/stream_codec.h"

namespace nbspamd::replication {

// What one position-report round read from Redis, and what the rounds before it learned.
struct TrimRound {
  std::int64_t now_ms = 0;        // This round's time (Unix milliseconds).
  std::int64_t retention_ms = 0;  // ClusterOptions::retention. REQUIRES: not negative.
  std::string self;               // This daemon's name in "<stream>:positions".
  StreamId applied;               // What this daemon has applied ("0-0" before any).
  bool stream_read = true;        // Whether reading the stream's last entry succeeded.
  // "<stream>:positions" as read, by daemon name: its report, or nullopt for one that cannot be
  // parsed (DecodePositionReport failed). nullopt when reading the hash failed.
  std::optional<std::map<std::string, std::optional<PositionReport>>> reports;
  // The daemons seen within the window by earlier rounds: the previous TrimDecision::known
  // ({} at start).
  std::map<std::string, PositionReport> known;
};

struct TrimDecision {
  // The stream's entries below this id may be deleted (XTRIM MINID floor); nullopt: keep them
  // all (the round was incomplete, or nothing is old and applied everywhere).
  std::optional<StreamId> floor;
  // The daemons to remember as seen within the window: pass it as the next TrimRound::known.
  // When the positions could not be read, the round's `known` unchanged.
  std::map<std::string, PositionReport> known;
  // Daemons remembered from earlier rounds whose report is missing from the hash (or unparsable)
  // and that still hold the stream back, each with the position it holds it at. The caller
  // reports each as an error.
  std::vector<std::pair<std::string, StreamId>> missing;
};

// The trim floor of `round`, by the rules above. Pure and thread-safe.
[[nodiscard]] TrimDecision TrimFloor(const TrimRound& round);

// Whether the stream was trimmed past `position`, a daemon's applied position ("" before any):
// true when "<stream>:trimmed" holds `trimmed_through`, the largest entry id trimming deleted,
// and `position` is before it, so events this daemon never applied are gone and it must not
// follow the stream. A `trimmed_through` that is not a stream id (or "") counts as nothing
// trimmed; a `position` that is not one as the beginning. Pure and thread-safe.
[[nodiscard]] bool TrimmedPast(std::string_view trimmed_through, std::string_view position);

}  // namespace nbspamd::replication

#endif  // NBSPAMD_REPLICATION_TRIM_FLOOR_H_
