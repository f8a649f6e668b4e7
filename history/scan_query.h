// ScanQuery: which scans a history listing wants (GET /history's filters), and Matches, the pure
// test of one summary against it.
#ifndef NBSPAMD_HISTORY_SCAN_QUERY_H_
#define NBSPAMD_HISTORY_SCAN_QUERY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "history/scan_record.h"

namespace nbspamd::history {

inline constexpr std::size_t kMaxScanPage = 1000;

struct ScanQuery {
  std::optional<std::int64_t> since_ms = {};  // Scans at or after this time.
  std::optional<std::int64_t> until_ms = {};  // Scans before this time.
  std::optional<std::string> verdict = {};    // "spam", "ham" or "unsure".
  std::optional<std::string> user = {};       // "" for the global model's scans.
  std::optional<std::string> front_end = {};  // "http", "milter" or "spamd".
  // Whether the scan was learned (learned_state.h, LearnedMatches): "yes", "no", "spam", "ham",
  // "checked" or "forgotten".
  std::optional<std::string> learned = {};
  // Matched against the kept facts, the message key and the scan id: a case-insensitive
  // substring of a fact kept as text, or a value whose HashedFact a hashed fact equals.
  std::string text = {};
  std::string before =
      {};                  // The page cursor: only scans whose id sorts before it ("": the newest).
  std::size_t limit = 50;  // 1..kMaxScanPage.
};

// Whether `summary` passes every filter of `query` but the cursor, the time window and the limit.
// `hashed_text` is HashedFact(query.text), computed once by the caller.
[[nodiscard]] bool Matches(const ScanQuery& query, const std::string& hashed_text,
                           const ScanSummary& summary);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_QUERY_H_
