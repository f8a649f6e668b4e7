// RocksdbStore, the model expiry of its user layers: retiring old user ledger records into the
// users' base counts and dropping the users' rare, old tokens of little weight (docs/STORAGE.md
// "Ledger retention" and "Token expiry"). The global model's are in rocksdb_store_retention.cc and
// rocksdb_store_expiry.cc; the rest of the class in rocksdb_store.cc and the other
// rocksdb_store_*.cc files.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "storage/ascending_reader.h"
#include "storage/encoding.h"
#include "storage/retire_scan.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::storage {

namespace {

// Reads `key` of the users family and decodes it with `decode`; `absent` when there is no record.
template <class Value, class Decode>
std::expected<Value, Error> ReadUserRecord(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* users,
                                           const std::string& key, Value absent, Decode decode,
                                           std::string_view what) {
  std::string value;
  const rocksdb::Status status = db.Get(rocksdb::ReadOptions(), users, key, &value);
  if (status.IsNotFound()) return absent;
  if (!status.ok()) return RocksdbError(what, status);
  return decode(value);
}

std::expected<TokenCounts, Error> DecodeCounts(std::string_view value) {
  return DecodeTokenCounts(value);
}

// Moves `seen_keys` after the last delta's keys in `dropped_keys` (if any).
void AppendSeenKeys(std::vector<std::vector<std::string>>& dropped_keys,
                    std::vector<std::string>& seen_keys) {
  if (!dropped_keys.empty()) {
    std::move(seen_keys.begin(), seen_keys.end(), std::back_inserter(dropped_keys.back()));
  }
  seen_keys.clear();
}

}  // namespace

std::expected<RetireStep, Error> RocksdbStore::RetireUserLedgers(std::int64_t learned_before,
                                                                 std::size_t max_records,
                                                                 std::string_view stream_position,
                                                                 std::string_view from) {
  std::lock_guard write_lock(write_mutex_);
  if (!writable_.load()) return std::unexpected(StoppedError());
  RetireStep step;
  std::shared_lock database_lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::DB& db = database_->db();
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);

  // The oldest records of each source of each user, up to max_records in all.
  std::vector<RetireUserCandidate> candidates;
  if (users != nullptr) {
    std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions(), users));
    auto found = FindUserRetirable(*it, learned_before, max_records, from, candidates);
    if (!found) return std::unexpected(std::move(found.error()));
    step = std::move(*found);
  }
  if (candidates.empty() && stream_position.empty()) return step;

  const std::shared_ptr<const model::ModelStats> stats = cache_.Stats();
  // What the retired records add to each user's base counts (by user and token, by class), the
  // newest learned_at of those that hold each token, and the documents by user and class.
  std::map<std::pair<std::string, TokenHash>, TokenCounts> added;
  std::map<std::pair<std::string, TokenHash>, std::int64_t> seen;
  std::map<std::string, std::vector<std::uint64_t>> documents;
  rocksdb::WriteBatch batch;
  for (const RetireUserCandidate& candidate : candidates) {
    batch.Delete(users, candidate.source_key);
    std::string value;
    const rocksdb::Status read =
        db.Get(rocksdb::ReadOptions(), users, UserLedgerKey(candidate.user, candidate.id), &value);
    if (!read.ok() && !read.IsNotFound()) return RocksdbError("reading a user's ledger", read);
    // An index entry without its live record (none in a consistent folder) just goes.
    if (read.IsNotFound()) continue;
    auto found = DecodeLedgerEntry(value);
    if (!found) return std::unexpected(found.error());
    if (found->retired) continue;
    model::LedgerEntry& entry = *found;
    const auto class_index = stats->FindClass(entry.label);
    if (!class_index) {
      return MakeError(ErrorCode::kDataLoss, "ledger record '" + candidate.id + "' of user '" +
                                                 candidate.user + "' names the unknown class '" +
                                                 entry.label + "'");
    }
    for (const BagEntry& token : entry.tokens) {
      TokenCounts& counts = added[{candidate.user, token.hash}];
      counts.resize(std::max(counts.size(), *class_index + 1), 0);
      counts[*class_index] += token.count;
      std::int64_t& last = seen[{candidate.user, token.hash}];
      last = std::max(last, entry.origin.learned_at);
    }
    std::vector<std::uint64_t>& user_documents = documents[candidate.user];
    user_documents.resize(std::max(user_documents.size(), *class_index + 1), 0);
    ++user_documents[*class_index];
    entry.tokens.clear();
    entry.retired = true;
    batch.Put(users, UserLedgerKey(candidate.user, candidate.id), EncodeLedgerEntry(entry));
    ++step.retired;
  }
  for (const auto& [user_token, counts] : added) {
    const auto& [user, hash] = user_token;
    const std::string base_key = UserBaseKey(user, hash);
    auto base =
        ReadUserRecord(db, users, base_key, TokenCounts{}, DecodeCounts, "reading a user's base");
    if (!base) return std::unexpected(base.error());
    base->resize(std::max(base->size(), counts.size()), 0);
    for (std::size_t c = 0; c < counts.size(); ++c) (*base)[c] += counts[c];
    batch.Put(users, base_key, EncodeTokenCounts(*base));
    const std::string seen_key = UserSeenKey(user, hash);
    auto last = ReadUserRecord(
        db, users, seen_key, std::int64_t{0}, [](std::string_view v) { return DecodeLastSeen(v); },
        "reading a user's last-seen times");
    if (!last) return std::unexpected(last.error());
    batch.Put(users, seen_key, EncodeLastSeen(std::max(*last, seen[user_token])));
  }
  for (const auto& [user, retired_documents] : documents) {
    const std::string key = UserBaseDocumentsKey(user);
    auto base = ReadUserRecord(
        db, users, key, std::vector<std::uint64_t>{},
        [](std::string_view v) { return DecodeDocumentCounts(v); }, "reading a user's base");
    if (!base) return std::unexpected(base.error());
    base->resize(std::max(base->size(), retired_documents.size()), 0);
    for (std::size_t c = 0; c < retired_documents.size(); ++c) (*base)[c] += retired_documents[c];
    while (!base->empty() && base->back() == 0) base->pop_back();
    batch.Put(users, key, EncodeDocumentCounts(*base));
  }
  if (!stream_position.empty()) {
    batch.Put(database_->family(kMeta), kStreamPositionKey,
              rocksdb::Slice(stream_position.data(), stream_position.size()));
  }
  rocksdb::WriteOptions write_options;
  // Not synced, as RetireLedger: a step lost in a crash is done again.
  write_options.sync = false;
  const rocksdb::Status status = db.Write(write_options, &batch);
  if (!status.ok()) {
    if (!FaultOf(status)) return RocksdbError("retiring user ledger records", status);
    database_lock.unlock();
    return std::unexpected(StopWrites("retiring user ledger records", status));
  }
  // Nothing in memory changes: the layers' counts and stats are the same.
  if (!stream_position.empty()) {
    std::lock_guard lock(position_mutex_);
    stream_position_ = std::string(stream_position);
  }
  return step;
}

std::expected<UserTokenExpiryStep, Error> RocksdbStore::ExpireUserTokens(
    const TokenExpiryRule& rule, std::string_view from, std::size_t max_examined,
    const std::optional<std::string>& until, std::string_view stream_position) {
  std::lock_guard write_lock(write_mutex_);
  if (!writable_.load()) return std::unexpected(StoppedError());
  UserTokenExpiryStep step;
  std::vector<model::Delta> deltas;  // One per user with a token to drop, in user order.
  // Each delta's base keys, then its last-seen keys, each in key order: a write batch whose keys
  // follow each other in the memory table inserts them at a fraction of the cost of one that
  // goes back and forth between the two kinds.
  std::vector<std::vector<std::string>> dropped_keys;
  std::vector<std::string> dropped_seen_keys;  // The current delta's last-seen keys.
  {
    std::shared_lock database_lock(database_mutex_);
    if (!database_) return std::unexpected(StoppedError());
    rocksdb::DB& db = database_->db();
    rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
    if (users != nullptr) {
      rocksdb::ReadOptions read_options;
      read_options.fill_cache = false;
      std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(read_options, users));
      // Each user's token and last-seen records are read in the order of the base records, so
      // with iterators that follow the base records rather than a Get each.
      AscendingReader totals(db, users, read_options);
      AscendingReader seen(db, users, read_options);
      std::string user;                        // Whose base records are being read.
      std::optional<model::ModelStats> stats;  // That user's layer stats (nullopt: no layer).
      for (it->Seek(rocksdb::Slice(from.data(), from.size())); it->Valid();) {
        const std::string_view key(it->key().data(), it->key().size());
        if (until && key >= *until) break;
        auto decoded = DecodeUserKey(key);
        if (!decoded) return std::unexpected(decoded.error());
        if (decoded->kind != kUserBaseKind) {
          it->Seek(decoded->kind < kUserBaseKind ? UserKindPrefix(decoded->user, kUserBaseKind)
                                                 : UserKeyEnd(decoded->user));
          continue;
        }
        if (max_examined != 0 && step.examined == max_examined) {
          step.next = std::string(key);
          break;
        }
        ++step.examined;
        if (decoded->user != user) {
          user = std::string(decoded->user);
          auto read = ReadUserRecord(
              db, users, UserStatsKey(user), std::optional<model::ModelStats>(),
              [](std::string_view v) -> std::expected<std::optional<model::ModelStats>, Error> {
                auto decoded_stats = DecodeModelStats(v);
                if (!decoded_stats) return std::unexpected(decoded_stats.error());
                return std::move(*decoded_stats);
              },
              "reading a user's stats");
          if (!read) return std::unexpected(read.error());
          stats = std::move(*read);
        }
        auto hash = DecodeTokenKey(decoded->rest);
        if (!hash) return std::unexpected(hash.error());
        auto base = DecodeTokenCounts(std::string_view(it->value().data(), it->value().size()));
        if (!base) return std::unexpected(base.error());
        TrimZeros(*base);
        it->Next();
        if (!stats) continue;  // Base records without a layer (none in a consistent folder).
        // A token some live record of the user holds has more than its base counts.
        auto total_value = totals.Find(UserTokenKey(user, *hash), "reading a user layer");
        if (!total_value) return std::unexpected(total_value.error());
        auto total = *total_value ? DecodeTokenCounts(**total_value)
                                  : std::expected<TokenCounts, Error>(TokenCounts{});
        if (!total) return std::unexpected(total.error());
        TrimZeros(*total);
        if (base->empty() || *total != *base) continue;
        if (rule.max_count != 0 &&
            std::accumulate(total->begin(), total->end(), std::uint64_t{0}) > rule.max_count) {
          continue;
        }
        if (ExpiryKeeps(rule, *total, *stats)) continue;
        auto seen_value = seen.Find(UserSeenKey(user, *hash), "reading a user's last-seen times");
        if (!seen_value) return std::unexpected(seen_value.error());
        auto last_seen =
            *seen_value ? DecodeLastSeen(**seen_value) : std::expected<std::int64_t, Error>(0);
        if (!last_seen) return std::unexpected(last_seen.error());
        if (*last_seen >= rule.seen_before) continue;
        if (deltas.empty() || deltas.back().user->user != user) {
          AppendSeenKeys(dropped_keys, dropped_seen_keys);
          deltas.emplace_back().user.emplace().user = user;
          dropped_keys.emplace_back();
        }
        model::UserLayerChange& change = *deltas.back().user;
        for (std::size_t c = 0; c < total->size(); ++c) {
          if ((*total)[c] == 0) continue;
          change.token_changes.push_back(
              {*hash, static_cast<std::uint32_t>(c), -static_cast<std::int64_t>((*total)[c])});
        }
        dropped_keys.back().push_back(UserBaseKey(user, *hash));
        dropped_seen_keys.push_back(UserSeenKey(user, *hash));
        ++step.dropped;
      }
      if (!it->status().ok()) return RocksdbError("reading the users' base counts", it->status());
      AppendSeenKeys(dropped_keys, dropped_seen_keys);
    }
  }
  if (deltas.empty() && stream_position.empty()) return step;
  // The position on its own, so that it is stored whatever becomes of the users' deltas.
  if (!stream_position.empty()) deltas.emplace_back().stream_position = stream_position;
  auto applied = ApplyBatchLocked(
      deltas,
      [&](const RocksdbDatabase& database, rocksdb::WriteBatch& batch,
          const BatchResults& results) {
        for (std::size_t i = 0; i < dropped_keys.size(); ++i) {
          if (!results[i]) continue;
          for (const std::string& key : dropped_keys[i]) batch.Delete(database.family(kUsers), key);
        }
      },
      /*sync=*/false);
  if (!applied) return std::unexpected(applied.error());
  for (auto& result : *applied) {
    if (!result) return std::unexpected(std::move(result.error()));
  }
  return step;
}

}  // namespace nbspamd::storage
