// ScanHistory's read side: Find and List (scan_history.h), over the written scans in RocksDB and
// the bag log and the scans still queued for the writer.
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "history/scan_codec.h"
#include "history/scan_history.h"
#include "history/scan_history_keys.h"
#include "history/scan_id.h"

namespace nbspamd::history {

namespace {

// A listing reads at most this many summaries for one page.
constexpr std::size_t kMaxExaminedPerPage = 10'000;

}  // namespace

std::unexpected<Error> ScanHistory::AgedOut(std::string_view scan_id) const {
  return MakeError(ErrorCode::kExpired,
                   "scan " + std::string(scan_id) +
                       " has aged out of the history (it keeps the last " +
                       std::to_string(options_.max_scans) + " scans, of at most " +
                       std::to_string(options_.max_age_ms / 86'400'000) + " days)");
}

std::expected<ScanRecord, Error> ScanHistory::Find(std::string_view scan_id) const {
  const std::optional<std::int64_t> time = ScanIdTime(scan_id);
  if (!time) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "'" + std::string(scan_id.substr(0, 64)) + "' is not a scan id");
  }
  {
    std::lock_guard lock(mutex_);
    for (const EncodedScan& scan : writing_) {
      if (scan.id() == scan_id) return scan.Decode();
    }
    for (const EncodedScan& scan : queue_) {
      if (scan.id() == scan_id) return scan.Decode();
    }
  }
  std::string summary;
  rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), Key(kSummaryKind, scan_id), &summary);
  if (status.IsNotFound()) {
    // Aged out: older than the age bound, or older than every scan of a history at its count
    // bound. Else it was never here (another daemon's, or deleted with its user).
    bool aged_out = *time < NowMs() - options_.max_age_ms;
    if (!aged_out) {
      std::lock_guard lock(mutex_);
      aged_out = figures_.kept >= options_.max_scans && !oldest_.empty() && scan_id < oldest_;
    }
    if (aged_out) return AgedOut(scan_id);
    return MakeError(ErrorCode::kNotFound, "no scan " + std::string(scan_id) + " in the history");
  }
  if (!status.ok()) return RocksError("reading a scan", status);
  auto stored = DecodeScanSummary(scan_id, summary);
  if (!stored) return std::unexpected(std::move(stored.error()));
  auto detail = ReadDetail(scan_id, stored->detail_location);
  if (!detail) return std::unexpected(std::move(detail.error()));
  return ScanRecord{std::move(stored->summary), std::move(*detail)};
}

std::expected<ScanDetail, Error> ScanHistory::ReadDetail(
    std::string_view scan_id, const std::optional<BagLocation>& location) const {
  // From the bag log; for a summary of format 1, from RocksDB (with its bag, or where that is).
  std::optional<BagLocation> in_log = location;
  std::optional<ScanDetail> detail;
  if (!in_log) {
    std::string value;
    const rocksdb::Status status =
        db_->Get(rocksdb::ReadOptions(), Key(kDetailKind, scan_id), &value);
    if (!status.ok()) return RocksError("reading a scan's detail", status);
    auto stored = DecodeScanDetail(value);
    if (!stored) return std::unexpected(std::move(stored.error()));
    if (!stored->bag_location) return std::move(stored->detail);
    detail = std::move(stored->detail);
    in_log = std::move(stored->bag_location);
  }
  auto payload = bags_->Read(*in_log);
  // Its segment went with the scans removed meanwhile.
  if (!payload && payload.error().code == ErrorCode::kNotFound) return AgedOut(scan_id);
  if (!payload) return std::unexpected(std::move(payload.error()));
  if (!detail) {
    auto stored = DecodeScanDetail(*payload);
    if (!stored) return std::unexpected(std::move(stored.error()));
    return std::move(stored->detail);
  }
  auto bag = DecodeScanBag(*payload);  // A format 2 detail's bag, alone.
  if (!bag) return std::unexpected(std::move(bag.error()));
  detail->bag = std::move(*bag);
  return std::move(*detail);
}

std::expected<ScanPage, Error> ScanHistory::List(const ScanQuery& query) const {
  if (query.limit == 0 || query.limit > kMaxScanPage) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "limit must be from 1 to " + std::to_string(kMaxScanPage));
  }
  if (!query.before.empty() && !ScanIdTime(query.before)) {
    return MakeError(ErrorCode::kInvalidArgument, "'before' is not a scan id");
  }
  // The window as ids: [low, high).
  const std::string low = query.since_ms ? FirstScanIdAt(*query.since_ms) : std::string();
  std::string high = query.until_ms ? FirstScanIdAt(*query.until_ms) : std::string();
  if (!query.before.empty() && (high.empty() || query.before < high)) high = query.before;
  const auto in_window = [&](std::string_view id) {
    return id >= low && (high.empty() || id < high);
  };
  const std::string hashed = query.text.empty() ? std::string() : HashedFact(query.text, fact_key_);

  std::vector<ScanSummary> found;
  // The scans not yet written: under the lock only a copy of their ids and summaries (a few
  // hundred bytes each), so that a listing never holds up the classifications that queue scans;
  // decoded and matched after.
  std::vector<std::pair<std::string, std::string>> unwritten;
  {
    std::lock_guard lock(mutex_);
    unwritten.reserve(writing_.size() + queue_.size());
    const auto copy = [&](const EncodedScan& scan) {
      if (in_window(scan.id())) unwritten.emplace_back(scan.id(), scan.summary());
    };
    std::ranges::for_each(writing_, copy);
    std::ranges::for_each(queue_, copy);
  }
  for (const auto& [id, summary_bytes] : unwritten) {
    auto summary = EncodedScan::DecodeSummary(id, summary_bytes);
    if (!summary) return std::unexpected(std::move(summary.error()));
    if (Matches(query, hashed, *summary)) found.push_back(std::move(*summary));
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(high.empty() ? std::string(1, kSummaryKind + 1) : Key(kSummaryKind, high));
  std::size_t examined = 0;
  std::size_t matched = 0;
  bool more = false;
  std::string last_examined;
  for (; it->Valid() && it->key().starts_with(std::string_view(&kSummaryKind, 1)); it->Prev()) {
    std::string id = it->key().ToString().substr(1);
    if (!high.empty() && id >= high) continue;
    if (id < low) break;
    if (matched == query.limit || examined == kMaxExaminedPerPage) {
      more = true;
      break;
    }
    ++examined;
    auto stored = DecodeScanSummary(id, it->value().ToStringView());
    if (!stored) return std::unexpected(std::move(stored.error()));
    last_examined = std::move(id);
    if (!Matches(query, hashed, stored->summary)) continue;
    found.push_back(std::move(stored->summary));
    ++matched;
  }
  if (!it->status().ok()) return RocksError("listing the scans", it->status());

  // Queued scans may also be written by now: one copy each, newest first.
  std::ranges::sort(found, std::ranges::greater{}, &ScanSummary::scan_id);
  const auto [first, last] = std::ranges::unique(found, {}, &ScanSummary::scan_id);
  found.erase(first, last);
  ScanPage page;
  if (found.size() > query.limit) {
    found.resize(query.limit);
    page.next = found.back().scan_id;  // The rest of the window lies below the page's last.
  } else if (more) {
    page.next = last_examined;  // At or below the page's last scan: nothing is skipped.
  }
  page.scans = std::move(found);
  return page;
}

}  // namespace nbspamd::history
