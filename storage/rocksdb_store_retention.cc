// RocksdbStore, its ledger retention: retiring old ledger records into the base counts
// (docs/STORAGE.md "Ledger retention"). The rest of the class is in rocksdb_store.cc,
// rocksdb_store_recovery.cc and rocksdb_store_users.cc.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <vector>

#include "storage/encoding.h"
#include "storage/retire_scan.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::storage {

namespace {

// Reads `key` of `family` as counts (empty when absent).
template <class Decode>
auto ReadRecord(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, const std::string& key,
                Decode decode, std::string_view what)
    -> std::expected<typename decltype(decode(std::string_view()))::value_type, Error> {
  using Value = typename decltype(decode(std::string_view()))::value_type;
  if (family == nullptr) return Value{};
  std::string value;
  const rocksdb::Status status = db.Get(rocksdb::ReadOptions(), family, key, &value);
  if (status.IsNotFound()) return Value{};
  if (!status.ok()) return RocksdbError(what, status);
  return decode(value);
}

}  // namespace

std::expected<RetireStep, Error> RocksdbStore::RetireLedger(std::int64_t learned_before,
                                                            std::size_t max_records,
                                                            std::string_view stream_position,
                                                            std::string_view from) {
  std::lock_guard write_lock(write_mutex_);
  if (!writable_.load()) return std::unexpected(StoppedError());
  RetireStep step;

  // The oldest records of each source, up to max_records in all.
  std::vector<RetireCandidate> candidates;
  {
    std::shared_lock database_lock(database_mutex_);
    if (!database_) return std::unexpected(StoppedError());
    std::unique_ptr<rocksdb::Iterator> it(
        database_->db().NewIterator(rocksdb::ReadOptions(), database_->family(kSources)));
    auto found = FindRetirable(*it, learned_before, max_records, from, candidates);
    if (!found) return std::unexpected(std::move(found.error()));
    step = std::move(*found);
  }
  if (candidates.empty() && stream_position.empty()) return step;

  if (!candidates.empty()) {
    std::unique_lock lock(database_mutex_);
    for (const FamilyIndex family : {kBase, kSeen}) {
      if (auto created = database_->CreateFamily(family); !created) {
        if (!FaultOf(created.error())) return RocksdbError("creating a family", created.error());
        lock.unlock();
        return std::unexpected(StopWrites("creating a family", created.error()));
      }
    }
  }
  std::shared_lock database_lock(database_mutex_);
  rocksdb::DB& db = database_->db();
  const std::shared_ptr<const model::ModelStats> stats = cache_.Stats();

  // What the retired records add to the base counts, by token and by class, and the newest
  // learned_at of those that hold each token.
  std::map<TokenHash, TokenCounts> added;
  std::map<TokenHash, std::int64_t> seen;
  auto base_documents = ReadRecord(
      db, database_->family(kMeta), kBaseDocumentsKey,
      [](std::string_view v) { return DecodeDocumentCounts(v); }, "reading the base documents");
  if (!base_documents) return std::unexpected(base_documents.error());
  base_documents->resize(std::max(base_documents->size(), stats->classes.size()), 0);

  rocksdb::WriteBatch batch;
  for (const RetireCandidate& candidate : candidates) {
    std::string value;
    const rocksdb::Status read =
        db.Get(rocksdb::ReadOptions(), database_->family(kLedger), candidate.id, &value);
    if (!read.ok() && !read.IsNotFound()) return RocksdbError("reading the training ledger", read);
    batch.Delete(database_->family(kSources), candidate.source_key);
    // An index entry without its live record (none in a consistent folder) just goes.
    if (read.IsNotFound()) continue;
    auto found = DecodeLedgerEntry(value);
    if (!found) return std::unexpected(found.error());
    if (found->retired) continue;
    model::LedgerEntry& entry = *found;
    if (entry.checked) {  // It counted nothing: it only leaves the index and becomes retired.
      entry.retired = true;
      batch.Put(database_->family(kLedger), candidate.id, EncodeLedgerEntry(entry));
      ++step.retired;
      continue;
    }
    const auto class_it = std::find_if(stats->classes.begin(), stats->classes.end(),
                                       [&](const auto& c) { return c.label == entry.label; });
    if (class_it == stats->classes.end()) {
      return MakeError(ErrorCode::kDataLoss, "ledger record '" + candidate.id +
                                                 "' names the unknown class '" + entry.label + "'");
    }
    const auto class_index = static_cast<std::size_t>(class_it - stats->classes.begin());
    for (const BagEntry& token : entry.tokens) {
      TokenCounts& counts = added[token.hash];
      counts.resize(std::max(counts.size(), class_index + 1), 0);
      counts[class_index] += token.count;
      std::int64_t& last = seen[token.hash];
      last = std::max(last, entry.origin.learned_at);
    }
    ++(*base_documents)[class_index];
    entry.tokens.clear();
    entry.retired = true;
    batch.Put(database_->family(kLedger), candidate.id, EncodeLedgerEntry(entry));
    ++step.retired;
  }
  // The tokens' base counts and last-seen times, read in two batched lookups (keys in order).
  std::vector<std::string> keys;
  keys.reserve(added.size());
  for (const auto& [hash, counts] : added) keys.push_back(EncodeTokenKey(hash));
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> bases(keys.size());
  std::vector<rocksdb::PinnableSlice> lasts(keys.size());
  std::vector<rocksdb::Status> base_statuses(keys.size());
  std::vector<rocksdb::Status> last_statuses(keys.size());
  db.MultiGet(rocksdb::ReadOptions(), database_->family(kBase), keys.size(), slices.data(),
              bases.data(), base_statuses.data(), /*sorted_input=*/true);
  db.MultiGet(rocksdb::ReadOptions(), database_->family(kSeen), keys.size(), slices.data(),
              lasts.data(), last_statuses.data(), /*sorted_input=*/true);
  std::size_t i = 0;
  for (const auto& [hash, counts] : added) {
    TokenCounts base;
    if (!base_statuses[i].IsNotFound()) {
      if (!base_statuses[i].ok()) return RocksdbError("reading the base counts", base_statuses[i]);
      auto decoded = DecodeTokenCounts(std::string_view(bases[i].data(), bases[i].size()));
      if (!decoded) return std::unexpected(decoded.error());
      base = std::move(*decoded);
    }
    base.resize(std::max(base.size(), counts.size()), 0);
    for (std::size_t c = 0; c < counts.size(); ++c) base[c] += counts[c];
    batch.Put(database_->family(kBase), keys[i], EncodeTokenCounts(base));
    std::int64_t last = 0;
    if (!last_statuses[i].IsNotFound()) {
      if (!last_statuses[i].ok()) {
        return RocksdbError("reading the last-seen times", last_statuses[i]);
      }
      auto decoded = DecodeLastSeen(std::string_view(lasts[i].data(), lasts[i].size()));
      if (!decoded) return std::unexpected(decoded.error());
      last = *decoded;
    }
    batch.Put(database_->family(kSeen), keys[i], EncodeLastSeen(std::max(last, seen[hash])));
    ++i;
  }
  if (step.retired > 0) {
    while (!base_documents->empty() && base_documents->back() == 0) base_documents->pop_back();
    batch.Put(database_->family(kMeta), kBaseDocumentsKey, EncodeDocumentCounts(*base_documents));
  }
  if (!stream_position.empty()) {
    batch.Put(database_->family(kMeta), kStreamPositionKey,
              rocksdb::Slice(stream_position.data(), stream_position.size()));
  }
  rocksdb::WriteOptions write_options;
  // Not synced: a step lost in a crash leaves the model as it was before it (the batch is
  // atomic), and the next pass (or, in cluster mode, the stream entry read again) does it again.
  // Any later synced write makes it durable. Syncing each step would double its time.
  write_options.sync = false;
  const rocksdb::Status status = db.Write(write_options, &batch);
  if (!status.ok()) {
    if (!FaultOf(status)) return RocksdbError("retiring ledger records", status);
    return std::unexpected(StopWrites("retiring ledger records", status));
  }
  // Nothing in memory changes: the counts, the stats and the calibration are the same.
  if (!stream_position.empty()) {
    std::lock_guard lock(position_mutex_);
    stream_position_ = std::string(stream_position);
  }
  return step;
}

std::expected<std::vector<std::string>, Error> RocksdbStore::RetireStepStarts(
    std::int64_t learned_before, std::size_t records_per_step, bool users,
    std::size_t max_starts) const {
  if (records_per_step == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "a retire step of no records");
  }
  std::shared_lock database_lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const family = database_->family(users ? kUsers : kSources);
  std::vector<std::string> starts;
  if (family == nullptr) return starts;
  // One iterator: one consistent view of the index for the whole cut.
  std::unique_ptr<rocksdb::Iterator> it(
      database_->db().NewIterator(rocksdb::ReadOptions(), family));
  std::string from;
  std::expected<RetireStep, Error> step;
  do {
    if (users) {
      std::vector<RetireUserCandidate> candidates;
      step = FindUserRetirable(*it, learned_before, records_per_step, from, candidates);
    } else {
      std::vector<RetireCandidate> candidates;
      step = FindRetirable(*it, learned_before, records_per_step, from, candidates);
    }
    if (step && step->more) {
      from = step->next;
      starts.push_back(from);
    }
  } while (step && step->more && (max_starts == 0 || starts.size() < max_starts));
  if (!step) return std::unexpected(std::move(step.error()));
  return starts;
}

std::expected<std::optional<std::int64_t>, Error> RocksdbStore::NthNewestLearned(
    std::uint64_t n) const {
  if (n == 0) return MakeError(ErrorCode::kInvalidArgument, "the 0th newest record");
  std::shared_lock database_lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const family = database_->family(kSources);
  if (family == nullptr) return std::nullopt;
  // The source index holds one key per live record, sorted by source and then time: the n
  // newest times over all sources, kept in a min-heap of n.
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> newest;
  std::unique_ptr<rocksdb::Iterator> it(
      database_->db().NewIterator(rocksdb::ReadOptions(), family));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto key = DecodeSourceKey(it->key().ToStringView());
    if (!key) return std::unexpected(std::move(key.error()));
    if (newest.size() < n) {
      newest.push(key->learned_at);
    } else if (key->learned_at > newest.top()) {
      newest.pop();
      newest.push(key->learned_at);
    }
  }
  if (!it->status().ok()) return RocksdbError("reading the source index", it->status());
  if (newest.size() < n) return std::nullopt;
  return newest.top();
}

}  // namespace nbspamd::storage
