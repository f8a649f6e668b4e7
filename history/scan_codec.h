// The on-disk encodings of the scan history (docs/STORAGE.md, "Scan history"). Do not change:
// stored on disk; a change needs a new kScanFormat. Each value starts with its format byte.
//
// Summary: format byte, varint time_ms, then length-prefixed (varint) front_end, user,
// message_key, label, verdict; a flags byte (1: score, 2: spam_confidence) and each present one
// as 8 bytes of IEEE 754 big-endian; varint size, varint tokens; the five facts length-prefixed.
// Detail: format byte, varint count of top tokens, each: length-prefixed text, a source byte,
// varint count, 8 bytes weight; then varint bag size and each entry: the hash as a varint of its
// difference from the previous hash (the bag is sorted), varint count.
#ifndef NBSPAMD_HISTORY_SCAN_CODEC_H_
#define NBSPAMD_HISTORY_SCAN_CODEC_H_

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"
#include "history/scan_record.h"

namespace nbspamd::history {

inline constexpr std::uint8_t kScanFormat = 1;

// The summary without its scan_id (the id is the key).
[[nodiscard]] std::string EncodeScanSummary(const ScanSummary& summary);
// Errors: kDataLoss for a truncated or malformed value or another format.
[[nodiscard]] std::expected<ScanSummary, Error> DecodeScanSummary(std::string_view scan_id,
                                                                  std::string_view value);

// REQUIRES: detail.bag sorted by hash, each hash once.
[[nodiscard]] std::string EncodeScanDetail(const ScanDetail& detail);
// Errors: as DecodeScanSummary.
[[nodiscard]] std::expected<ScanDetail, Error> DecodeScanDetail(std::string_view value);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_CODEC_H_
