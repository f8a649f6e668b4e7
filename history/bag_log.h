// BagLog: the details of the scan history (each scan's token bag and explaining tokens),
// appended to segment files beside its RocksDB database (docs/STORAGE.md, "Scan history").
//
// A detail is most of a scan's bytes (9 a token of its bag) and is written once, read only to
// show the scan or retrain it, and dropped with its scan, oldest first: in RocksDB it went through
// the memory table, a flush and compaction after compaction, more than half of what the history
// cost each classify. Here it is copied once into a buffer and written with the batch; whole
// segments go once every scan in them is older than the oldest kept.
//
// Files: `bags-<scan id>` in the folder given to Open, named after the first scan appended, so
// names sort by time; a new one is started past kSegmentBytes. A record: 4 bytes size and 4
// bytes checksum (the low half of XXH3-64 of the payload), little-endian, then the payload.
//
// Thread safety: Append, Write, Sync, DropBefore and Erase on one thread (the history's writer);
// Read from any thread (it opens the segment by name).
#ifndef NBSPAMD_HISTORY_BAG_LOG_H_
#define NBSPAMD_HISTORY_BAG_LOG_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace nbspamd::history {

// Where a bag was appended: its segment (the scan id that names it), the record's offset, the
// payload's size.
struct BagLocation {
  std::string segment = {};
  std::uint64_t offset = 0;
  std::uint32_t size = 0;

  friend bool operator==(const BagLocation&, const BagLocation&) = default;
};

class BagLog {
 public:
  static constexpr std::uint64_t kSegmentBytes = std::uint64_t{64} << 20;

  // Opens (creating) the folder `dir`. Errors: kUnavailable when it cannot be created or read.
  [[nodiscard]] static std::expected<std::unique_ptr<BagLog>, Error> Open(std::string dir);
  BagLog(const BagLog&) = delete;
  BagLog& operator=(const BagLog&) = delete;
  ~BagLog();

  // Buffers `payload` as the record of scan `scan_id` (REQUIRES: a scan id, payload < 4 GiB);
  // it can be read once Write succeeds.
  [[nodiscard]] BagLocation Append(std::string_view scan_id, std::string_view payload);
  // Writes what was appended since the last Write (to the page cache: not synced). Errors:
  // kInsufficientStorage for a full disk, kUnavailable otherwise (also when Append started a new
  // segment and the write of the old one's bags failed); those bags are then not kept and the
  // next Append starts a new segment.
  [[nodiscard]] std::expected<void, Error> Write();
  // Syncs the segment being appended to (fdatasync). Errors: as Write.
  [[nodiscard]] std::expected<void, Error> Sync();
  // Removes every segment whose scans are all older than `oldest_kept` (a scan id), allowing a
  // minute for scans appended out of order; how many went.
  std::size_t DropBefore(std::string_view oldest_kept);
  // Overwrites the payload at `where` with zeros (a deleted user's bag), then syncs it. Errors:
  // kNotFound when its segment is gone (nothing left to erase is not an error for callers that
  // ignore it), kUnavailable for a failed write.
  [[nodiscard]] std::expected<void, Error> Erase(const BagLocation& where);
  // Erase of every location of `where`, each segment opened and synced once (a deleted user's
  // bags: one fdatasync a segment, not a bag). Segments gone are skipped. Errors: as Erase's
  // kUnavailable, at the first failed segment.
  [[nodiscard]] std::expected<void, Error> EraseAll(std::vector<BagLocation> where);

  // The payload at `where`. Errors: kNotFound when its segment is gone (dropped with old scans);
  // kDataLoss when the record there is not that payload (erased, cut, corrupt); kUnavailable
  // when the file cannot be read.
  [[nodiscard]] std::expected<std::string, Error> Read(const BagLocation& where) const;

  // The segments there are now, oldest first (for tests and figures). Writer thread.
  [[nodiscard]] const std::set<std::string>& Segments() const { return segments_; }

 private:
  explicit BagLog(std::string dir, std::set<std::string> segments);
  [[nodiscard]] std::string PathOf(std::string_view segment) const;
  void CloseSegment();

  std::string dir_;
  std::set<std::string> segments_;  // Names without the "bags-" prefix: scan ids.
  std::string current_;             // The segment appended to; "" before the first Append.
  int fd_ = -1;                     // current_'s, open for appending.
  std::uint64_t written_ = 0;       // current_'s size on disk.
  std::string buffer_;              // Appended, not yet written.
  std::optional<Error> failed_;     // A write Append did at a new segment failed.
};

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_BAG_LOG_H_
