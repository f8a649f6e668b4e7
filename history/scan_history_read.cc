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

// A scan as shown: its clear facts and the tokens that show them hashed when it is older than
// `clear_before` (the writer hashes the stored facts a little later).
void HashWhenOld(ScanSummary& summary, std::int64_t clear_before, const FactKey& key) {
  if (summary.time_ms < clear_before) (void)HashClearFacts(summary.facts, key);
}

}  // namespace

std::unexpected<Error> ScanHistory::AgedOut(std::string_view scan_id) const {
  return MakeError(ErrorCode::kExpired,
                   "scan " + std::string(scan_id) +
                       " has aged out of the history (it keeps the last " +
                       std::to_string(options_.max_scans) + " scans, of at most " +
                       std::to_string(options_.max_age_ms / 86'400'000) + " days)");
}

std::expected<ScanRecord, Error> ScanHistory::Find(std::string_view scan_id) const {
  auto found = FindStored(scan_id);
  if (!found) return found;
  found->summary.learned = LearnedOf(scan_id);
  const std::int64_t clear_before = ClearFactsBefore();
  if (found->summary.time_ms < clear_before) {
    HashWhenOld(found->summary, clear_before, fact_key_);
    for (ScanToken& token : found->detail.top) {
      token.text = HashedClearTokenText(token.text, token.source, fact_key_);
    }
  }
  return found;
}

std::expected<ScanRecord, Error> ScanHistory::FindStored(std::string_view scan_id) const {
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
  const std::int64_t clear_before = ClearFactsBefore();
  // The learned states not yet written, copied before the database is read: one the writer
  // writes meanwhile is in what the iterators read.
  std::map<std::string, LearnedState, std::less<>> pending;
  {
    std::lock_guard lock(learned_mutex_);
    for (const auto& [id, learned] : pending_learned_) {
      if (in_window(id)) pending.emplace(id, learned.state);
    }
  }
  const bool by_learned = query.learned && *query.learned != "no";

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
  ScanQuery others = query;  // The query but its learned filter.
  others.learned.reset();
  for (const auto& [id, summary_bytes] : unwritten) {
    auto summary = EncodedScan::DecodeSummary(id, summary_bytes);
    if (!summary) return std::unexpected(std::move(summary.error()));
    HashWhenOld(*summary, clear_before, fact_key_);
    // Looked up only for a scan the other filters pass: a learned state is one read.
    if (!Matches(others, hashed, *summary)) continue;
    if (auto at = pending.find(id); at != pending.end()) {
      summary->learned = at->second;
    } else {
      summary->learned = StoredLearned(id);
    }
    if (Matches(query, hashed, *summary)) found.push_back(std::move(*summary));
  }
  bool more = false;
  std::string last_examined;
  if (by_learned) {
    if (auto listed = ListLearned(query, hashed, low, high, pending, found, more, last_examined);
        !listed) {
      return std::unexpected(std::move(listed.error()));
    }
    return PageOf(std::move(found), query.limit, more, last_examined);
  }
  // The learned states, read beside the summaries in the same (descending) order.
  std::unique_ptr<rocksdb::Iterator> learned_it(db_->NewIterator(rocksdb::ReadOptions()));
  learned_it->SeekForPrev(high.empty() ? std::string(1, kLearnedKind + 1)
                                       : Key(kLearnedKind, high));
  const auto learned_of = [&](std::string_view id) -> std::optional<LearnedState> {
    if (auto at = pending.find(id); at != pending.end()) return at->second;
    const std::string key = Key(kLearnedKind, id);
    while (learned_it->Valid() &&
           learned_it->key().starts_with(std::string_view(&kLearnedKind, 1)) &&
           learned_it->key().compare(key) > 0) {
      learned_it->Prev();
    }
    if (!learned_it->Valid() || learned_it->key() != key) return std::nullopt;
    auto state = DecodeLearnedState(learned_it->value().ToStringView());
    if (!state) return std::nullopt;
    return std::move(*state);
  };
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(high.empty() ? std::string(1, kSummaryKind + 1) : Key(kSummaryKind, high));
  std::size_t examined = 0;
  std::size_t matched = 0;
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
    HashWhenOld(stored->summary, clear_before, fact_key_);
    stored->summary.learned = learned_of(id);
    last_examined = std::move(id);
    if (!Matches(query, hashed, stored->summary)) continue;
    found.push_back(std::move(stored->summary));
    ++matched;
  }
  if (!it->status().ok()) return RocksError("listing the scans", it->status());
  return PageOf(std::move(found), query.limit, more, last_examined);
}

ScanPage ScanHistory::PageOf(std::vector<ScanSummary> found, std::size_t limit, bool more,
                             const std::string& last_examined) {
  // Queued scans may also be written by now: one copy each, newest first.
  std::ranges::sort(found, std::ranges::greater{}, &ScanSummary::scan_id);
  const auto [first, last] = std::ranges::unique(found, {}, &ScanSummary::scan_id);
  found.erase(first, last);
  ScanPage page;
  if (found.size() > limit) {
    found.resize(limit);
    page.next = found.back().scan_id;  // The rest of the window lies below the page's last.
  } else if (more) {
    page.next = last_examined;  // At or below the page's last scan: nothing is skipped.
  }
  page.scans = std::move(found);
  return page;
}

std::expected<void, Error> ScanHistory::ListLearned(
    const ScanQuery& query, const std::string& hashed, const std::string& low,
    const std::string& high, const std::map<std::string, LearnedState, std::less<>>& pending,
    std::vector<ScanSummary>& found, bool& more, std::string& last_examined) const {
  const std::int64_t clear_before = ClearFactsBefore();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(high.empty() ? std::string(1, kLearnedKind + 1) : Key(kLearnedKind, high));
  // The pending states, newest first, merged with the stored ones.
  auto next_pending = pending.rbegin();
  std::size_t examined = 0;
  std::size_t matched = 0;
  std::string summary_bytes;
  for (;;) {
    std::string stored_id;
    const bool stored = it->Valid() && it->key().starts_with(std::string_view(&kLearnedKind, 1));
    if (stored) stored_id = it->key().ToString().substr(1);
    const bool from_pending =
        next_pending != pending.rend() && (!stored || next_pending->first >= stored_id);
    if (!stored && !from_pending) break;
    std::string id = from_pending ? next_pending->first : stored_id;
    if (!high.empty() && id >= high) {  // Past the window's top (a stored state at `high`).
      if (from_pending) ++next_pending;
      if (stored && stored_id == id) it->Prev();
      continue;
    }
    if (id < low) break;
    if (matched == query.limit || examined == kMaxExaminedPerPage) {
      more = true;
      break;
    }
    ++examined;
    std::optional<LearnedState> state;
    if (from_pending) {
      state = next_pending->second;
      ++next_pending;
      if (stored && stored_id == id) it->Prev();  // The pending one is newer.
    } else {
      auto decoded = DecodeLearnedState(it->value().ToStringView());
      if (decoded) state = std::move(*decoded);
      it->Prev();
    }
    last_examined = id;
    if (!LearnedMatches(*query.learned, state)) continue;
    const rocksdb::Status status =
        db_->Get(rocksdb::ReadOptions(), Key(kSummaryKind, id), &summary_bytes);
    if (status.IsNotFound()) continue;  // Not yet written (listed above), or gone.
    if (!status.ok()) return RocksError("reading a scan", status);
    auto summary = DecodeScanSummary(id, summary_bytes);
    if (!summary) return std::unexpected(std::move(summary.error()));
    HashWhenOld(summary->summary, clear_before, fact_key_);
    summary->summary.learned = std::move(state);
    if (!Matches(query, hashed, summary->summary)) continue;
    found.push_back(std::move(summary->summary));
    ++matched;
  }
  if (!it->status().ok()) return RocksError("listing the scans", it->status());
  return {};
}

}  // namespace nbspamd::history
