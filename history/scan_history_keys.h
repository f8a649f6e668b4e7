// The scan history's database layout and errors, shared by its files (scan_history.cc writes,
// scan_history_read.cc finds and lists). Internal to history/: no other file includes it.
#ifndef NBSPAMD_HISTORY_SCAN_HISTORY_KEYS_H_
#define NBSPAMD_HISTORY_SCAN_HISTORY_KEYS_H_

#include <rocksdb/status.h>

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::history {

// Keys: kind byte then the scan id. The summaries; their details are in the bag log, but for
// summaries of format 1, whose details are under the detail kind.
inline constexpr char kSummaryKind = 'm';
inline constexpr char kDetailKind = 'd';
// A scan's learned state (learned_state.h), when it was ever learned or forgotten.
inline constexpr char kLearnedKind = 'l';
inline constexpr std::uint8_t kSummaryWithDetailInDb = 1;  // The format byte of those summaries.

inline std::string Key(char kind, std::string_view scan_id) {
  std::string key(1, kind);
  key.append(scan_id);
  return key;
}

// kDataLoss for a corruption, else kInternal, naming `what` failed.
inline std::unexpected<Error> RocksError(std::string_view what, const rocksdb::Status& status) {
  return MakeError(status.IsCorruption() ? ErrorCode::kDataLoss : ErrorCode::kInternal,
                   "scan history: " + std::string(what) + ": " + status.ToString());
}

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_HISTORY_KEYS_H_
