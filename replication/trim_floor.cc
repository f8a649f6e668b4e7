#include "replication/trim_floor.h"

#include <algorithm>

namespace nbspamd::replication {

TrimDecision TrimFloor(const TrimRound& round) {
  TrimDecision decision;
  if (!round.reports) {
    // Nothing is known of the others this round: remember what was known, trim nothing.
    decision.known = round.known;
    return decision;
  }
  const std::int64_t now = round.now_ms;
  const std::int64_t window = round.retention_ms;
  bool complete = round.stream_read;
  // What this daemon has applied holds the stream back, whatever the hash says of it.
  StreamId oldest_needed = round.applied;
  const auto need = [&oldest_needed](const StreamId& position) {
    oldest_needed = std::min(oldest_needed, position);
  };
  std::map<std::string, PositionReport> reported;
  for (const auto& [name, report] : *round.reports) {
    if (!report) {
      complete = false;  // Whose position, and how recent, is unknown: it might need anything.
      continue;
    }
    reported.insert_or_assign(name, *report);
    if (now - report->seen_ms <= window) need(report->position);
  }
  // A daemon seen within the window whose report has gone still needs what it needed when last
  // seen.
  for (const auto& [name, known] : round.known) {
    if (reported.contains(name) || name == round.self || now - known.seen_ms > window) continue;
    decision.missing.emplace_back(name, known.position);
    need(known.position);
    decision.known.insert_or_assign(name, known);
  }
  for (const auto& [name, report] : reported) {
    if (now - report.seen_ms <= window) decision.known.insert_or_assign(name, report);
  }
  if (!complete) return decision;
  // Below what every daemon seen within the window has applied, and older than the window.
  const StreamId floor =
      std::min(StreamId{static_cast<std::uint64_t>(std::max<std::int64_t>(now - window, 0)), 0},
               oldest_needed);
  if (floor <= StreamId{0, 1}) return decision;  // MINID 0-1 could delete only 0-0: none.
  decision.floor = floor;
  return decision;
}

bool TrimmedPast(std::string_view trimmed_through, std::string_view position) {
  const std::optional<StreamId> through = StreamId::Parse(trimmed_through);
  const StreamId here = StreamId::Parse(position).value_or(StreamId{});
  return through && here < *through;
}

}  // namespace nbspamd::replication
