// The on-disk encodings of the scan history (docs/STORAGE.md, "Scan history"). Do not change:
// stored on disk; a change needs a new format number. Each value starts with its format byte.
//
// Summary (kScanFormat, 2; RocksDB's value): format byte, varint time_ms, then length-prefixed
// (varint) front_end, user, message_key, label, verdict; a flags byte (1: score, 2:
// spam_confidence) and each present one as 8 bytes of IEEE 754 big-endian; varint size, varint
// tokens; the five facts length-prefixed; then where the scan's detail is in the bag log
// (history/bag_log.h): length-prefixed segment, varint offset, varint size.
// Detail (kScanDetailFormat, 5; a bag log record's payload): format byte, varint count of top
// tokens, each: length-prefixed text, a source byte, varint count, 8 bytes weight; then the bag:
// varint entries, the hashes (sorted) as 8-byte little-endian words, then their counts as varints;
// then the body digest: a length byte (0: none) and its bytes; then the bag's token families
// (storage::PutBagFamilies). A bag of words alone is written as format 4, which is format 5
// without the families, byte for byte as before they existed.
//
// Earlier formats, still read: a detail of format 3 is format 4 without the body digest; a summary
// of format 1 (without the location) had its detail in RocksDB beside it; a detail of format 2 held
// the top tokens and where the bag alone was in the bag log (the bag's layout as above, a record of
// its own); one of format 1, the top tokens and the bag: varint entries, each the varint difference
// of its hash from the previous one and its count.
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

inline constexpr std::uint8_t kScanFormat = 2;        // Of summaries written now.
inline constexpr std::uint8_t kScanDetailFormat = 5;  // Of details written now (4: words alone).

// A summary as stored: where its detail is in the bag log; none for format 1 (in RocksDB).
struct StoredSummary {
  ScanSummary summary = {};
  std::optional<BagLocation> detail_location = {};
};

// A detail as stored: with its bag (formats 3 and 1), or where the bag is (format 2).
struct StoredDetail {
  ScanDetail detail = {};
  std::optional<BagLocation> bag_location = {};
};

// Appends the summary without its scan_id (the id is the key) and without where its detail is,
// which AppendDetailLocation then appends: the two make a summary of the current format.
void AppendScanSummary(std::string& out, const ScanSummary& summary);
// Appends `detail`, where the scan's detail was appended to the bag log.
void AppendDetailLocation(std::string& out, const BagLocation& detail);
// Errors: kDataLoss for a truncated or malformed value or another format.
[[nodiscard]] std::expected<StoredSummary, Error> DecodeScanSummary(std::string_view scan_id,
                                                                    std::string_view value);

// The user and message key of an encoded summary (AppendScanSummary's bytes, format byte first),
// as views into `value`, without decoding the rest. False when it is malformed.
[[nodiscard]] bool SummaryUserAndKey(std::string_view value, std::string_view& user,
                                     std::string_view& message_key);

// Appends the detail, its top tokens and bag. REQUIRES: bag sorted by hash, each hash once.
void AppendScanDetail(std::string& out, const ScanDetail& detail);
// Errors: as DecodeScanSummary (a bag out of order is malformed too).
[[nodiscard]] std::expected<StoredDetail, Error> DecodeScanDetail(std::string_view value);

// A bag alone, as a format 2 detail's bag log record holds it. Errors: as DecodeScanDetail.
[[nodiscard]] std::expected<std::vector<BagEntry>, Error> DecodeScanBag(std::string_view value);

// A scan encoded whole, as the history queues it: its id, its summary (AppendScanSummary) and
// its detail (AppendScanDetail) back to back in one buffer. Encoded on the classifying thread, so
// that the history's writer only copies bytes, and a record's many small allocations are freed
// by the thread that made them. A plain value.
class EncodedScan {
 public:
  explicit EncodedScan(const ScanRecord& record);

  [[nodiscard]] std::string_view id() const { return std::string_view(bytes_).substr(0, id_size_); }
  [[nodiscard]] std::string_view summary() const {
    return std::string_view(bytes_).substr(id_size_, summary_size_);
  }
  [[nodiscard]] std::string_view detail_bytes() const {
    return std::string_view(bytes_).substr(id_size_ + summary_size_);
  }
  // Errors: as DecodeScanSummary (never for a scan encoded here).
  [[nodiscard]] std::expected<ScanSummary, Error> DecodeSummary() const;
  // DecodeSummary of a copy of id() and summary(), taken while the scan was at hand.
  [[nodiscard]] static std::expected<ScanSummary, Error> DecodeSummary(std::string_view id,
                                                                       std::string_view summary);
  [[nodiscard]] std::expected<ScanRecord, Error> Decode() const;

 private:
  std::string bytes_;
  std::uint32_t id_size_ = 0;
  std::uint32_t summary_size_ = 0;
};

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_CODEC_H_
