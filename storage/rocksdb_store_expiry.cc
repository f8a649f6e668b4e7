// RocksdbStore, its token expiry: dropping the tokens no ledger record holds that are rare,
// old and of little weight (docs/STORAGE.md "Token expiry"). The rest of the class is in
// rocksdb_store.cc and the other rocksdb_store_*.cc files.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include "storage/ascending_reader.h"
#include "storage/encoding.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::storage {

namespace {

constexpr std::int64_t kSecondsPerDay = 86400;

}  // namespace

std::expected<std::optional<TokenHash>, Error> RocksdbStore::ScanExpiryCandidates(
    const TokenExpiryRule& rule, TokenHash from, std::size_t max_examined,
    std::optional<TokenHash> until,
    const std::function<bool(TokenHash, const TokenCounts&, std::int64_t)>& each,
    std::uint64_t* examined) const {
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const base = database_->family(kBase);
  if (base == nullptr) return std::nullopt;  // No base counts: nothing can expire.
  rocksdb::ColumnFamilyHandle* const seen = database_->family(kSeen);
  const std::shared_ptr<const model::ModelStats> stats = cache_.Stats();
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, base));
  std::optional<AscendingReader> seen_reader;  // The last-seen times, in the base records' order.
  if (seen != nullptr) seen_reader.emplace(database_->db(), seen, read_options);
  std::uint64_t looked = 0;
  for (it->Seek(EncodeTokenKey(from)); it->Valid(); it->Next()) {
    auto hash = DecodeTokenKey(std::string_view(it->key().data(), it->key().size()));
    if (!hash) return std::unexpected(hash.error());
    if (until && *hash >= *until) return std::nullopt;
    if (max_examined != 0 && looked == max_examined) return *hash;
    ++looked;
    if (examined != nullptr) ++*examined;
    auto counts = DecodeTokenCounts(std::string_view(it->value().data(), it->value().size()));
    if (!counts) return std::unexpected(counts.error());
    TrimZeros(*counts);
    // A token some live record holds has more than its base counts.
    TokenCounts total = cache_.Get(*hash);
    TrimZeros(total);
    if (counts->empty() || total != *counts) continue;
    if (rule.max_count != 0 &&
        std::accumulate(total.begin(), total.end(), std::uint64_t{0}) > rule.max_count) {
      continue;
    }
    if (ExpiryKeeps(rule, total, *stats)) continue;
    std::int64_t last_seen = 0;
    if (seen_reader) {
      auto value = seen_reader->Find(std::string_view(it->key().data(), it->key().size()),
                                     "reading the last-seen times");
      if (!value) return std::unexpected(value.error());
      if (*value) {
        auto decoded = DecodeLastSeen(**value);
        if (!decoded) return std::unexpected(decoded.error());
        last_seen = *decoded;
      }
    }
    if (!each(*hash, total, last_seen)) {
      it->Next();
      if (!it->Valid()) break;
      auto next = DecodeTokenKey(std::string_view(it->key().data(), it->key().size()));
      if (!next) return std::unexpected(next.error());
      if (until && *next >= *until) return std::nullopt;
      return *next;
    }
  }
  if (!it->status().ok()) return RocksdbError("reading the base counts", it->status());
  return std::nullopt;
}

std::expected<TokenExpiryStep, Error> RocksdbStore::ExpireTokens(const TokenExpiryRule& rule,
                                                                 TokenHash from,
                                                                 std::size_t max_examined,
                                                                 std::optional<TokenHash> until,
                                                                 std::string_view stream_position) {
  std::lock_guard write_lock(write_mutex_);
  if (!writable_.load()) return std::unexpected(StoppedError());
  TokenExpiryStep step;
  model::Delta delta;
  std::vector<TokenHash> dropped;
  {
    std::shared_lock database_lock(database_mutex_);
    auto next = ScanExpiryCandidates(
        rule, from, max_examined, until,
        [&](TokenHash hash, const TokenCounts& counts, std::int64_t last_seen) {
          if (last_seen >= rule.seen_before) return true;
          dropped.push_back(hash);
          for (std::size_t c = 0; c < counts.size(); ++c) {
            if (counts[c] == 0) continue;
            delta.token_changes.push_back(
                {hash, static_cast<std::uint32_t>(c), -static_cast<std::int64_t>(counts[c])});
          }
          return true;
        },
        &step.examined);
    if (!next) return std::unexpected(next.error());
    step.next = *next;
  }
  if (dropped.empty() && stream_position.empty()) return step;
  delta.stream_position = std::string(stream_position);
  const std::array<model::Delta, 1> deltas = {std::move(delta)};
  auto applied = ApplyBatchLocked(
      deltas,
      [&](const RocksdbDatabase& database, rocksdb::WriteBatch& batch, const BatchResults&) {
        for (const TokenHash hash : dropped) {
          const std::string key = EncodeTokenKey(hash);
          batch.Delete(database.family(kBase), key);
          if (database.family(kSeen) != nullptr) batch.Delete(database.family(kSeen), key);
        }
      },
      /*sync=*/false);
  if (!applied) return std::unexpected(applied.error());
  if (!applied->front()) return std::unexpected(applied->front().error());
  step.dropped = dropped.size();
  return step;
}

std::expected<ExpiryCandidates, Error> RocksdbStore::FindExpiryCandidates(
    const TokenExpiryRule& rule) const {
  ExpiryCandidates candidates;
  std::shared_lock database_lock(database_mutex_);
  auto scanned = ScanExpiryCandidates(
      rule, 0, 0, std::nullopt,
      [&](TokenHash, const TokenCounts&, std::int64_t last_seen) {
        ++candidates[last_seen / kSecondsPerDay];
        return true;
      },
      nullptr);
  if (!scanned) return std::unexpected(scanned.error());
  return candidates;
}

}  // namespace nbspamd::storage
