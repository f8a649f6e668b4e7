// The on-disk encodings of the scan history (docs/STORAGE.md, "Scan history"). Do not change:
// stored on disk; a change needs a new format number. Each value starts with its format byte.
//
// Summary: format byte, varint time_ms, then length-prefixed (varint) front_end, user,
// message_key, label, verdict; a flags byte (1: score, 2: spam_confidence) and each present one
// as 8 bytes of IEEE 754 big-endian; varint size, varint tokens; the five facts length-prefixed.
// Detail (kScanDetailFormat, 2): format byte, varint count of top tokens, each: length-prefixed
// text, a source byte, varint count, 8 bytes weight; then where the bag is in the bag log
// (history/bag_log.h): length-prefixed segment, varint offset, varint size.
// Bag (EncodeScanBag, a bag log record's payload): varint entries, the hashes (sorted) as 8-byte
// little-endian words, then their counts as varints.
// A detail of format 1, still read, held the bag after the top tokens: varint entries, each the
// varint difference of its hash from the previous one and its count.
#ifndef NBSPAMD_HISTORY_SCAN_CODEC_H_
#define NBSPAMD_HISTORY_SCAN_CODEC_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/error.h"
#include "history/bag_log.h"
#include "history/scan_record.h"

namespace nbspamd::history {

inline constexpr std::uint8_t kScanFormat = 1;        // Of summaries.
inline constexpr std::uint8_t kScanDetailFormat = 2;  // Of details written now.

// A detail as stored: the bag in it (format 1), or where it is in the bag log.
struct StoredDetail {
  ScanDetail detail = {};
  std::optional<BagLocation> bag_location = {};
};

// The summary without its scan_id (the id is the key).
[[nodiscard]] std::string EncodeScanSummary(const ScanSummary& summary);
// Errors: kDataLoss for a truncated or malformed value or another format.
[[nodiscard]] std::expected<ScanSummary, Error> DecodeScanSummary(std::string_view scan_id,
                                                                  std::string_view value);

// REQUIRES: bag sorted by hash, each hash once.
[[nodiscard]] std::string EncodeScanBag(std::span<const BagEntry> bag);
// Errors: as DecodeScanSummary (a bag out of order is malformed too).
[[nodiscard]] std::expected<std::vector<BagEntry>, Error> DecodeScanBag(std::string_view value);

// The detail's top tokens and `bag`, where its bag was appended (detail.bag is not written).
[[nodiscard]] std::string EncodeScanDetail(const ScanDetail& detail, const BagLocation& bag);
// Errors: as DecodeScanBag.
[[nodiscard]] std::expected<StoredDetail, Error> DecodeScanDetail(std::string_view value);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_CODEC_H_
