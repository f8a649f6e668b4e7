#include "storage/rocksdb_store.h"

#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "storage/encoding.h"
#include "storage/resolved_delta.h"
#include "storage/rocksdb_layout.h"

namespace nbspamd::storage {
namespace {

enum FamilyIndex : std::size_t { kMeta = 0, kTokens = 1, kLedger = 2, kSources = 3 };

std::unexpected<Error> RocksdbError(std::string_view what, const rocksdb::Status& status) {
  const ErrorCode code = status.IsCorruption() ? ErrorCode::kDataLoss : ErrorCode::kInternal;
  return MakeError(code, std::string(what) + ": " + status.ToString());
}

// Reads a meta record; nullopt when absent.
std::expected<std::optional<std::string>, Error> GetMeta(rocksdb::DB& db,
                                                         rocksdb::ColumnFamilyHandle* meta,
                                                         const char* key) {
  std::string value;
  const rocksdb::Status status = db.Get(rocksdb::ReadOptions(), meta, key, &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return RocksdbError(std::string("reading ") + key, status);
  return value;
}

// Schema 1 → 2: schema 1 ledger records are valid schema 2 records (of origin {"", 0}); the
// source index is built from them, and the version record changes, in one synced write. The
// upgrade to 3 follows.
std::expected<void, Error> UpgradeFromSchema1(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions(), handles[kLedger]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto entry = DecodeLedgerEntry(std::string_view(it->value().data(), it->value().size()));
    if (!entry) return std::unexpected(entry.error());
    batch.Put(handles[kSources], EncodeSourceKey(it->key().ToStringView(), entry->origin), "");
  }
  if (!it->status().ok()) return RocksdbError("upgrading " + path, it->status());
  batch.Put(handles[kMeta], kSchemaVersionKey, "2");
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db.Write(write_options, &batch);
  if (!status.ok()) return RocksdbError("upgrading " + path, status);
  return {};
}

// Schema 2 → 3: schema 2 ledger records are valid schema 3 records without a held-out score, so
// the calibration histogram is empty; it and the version record are written in one synced write.
std::expected<void, Error> UpgradeFromSchema2(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  rocksdb::WriteBatch batch;
  batch.Put(handles[kMeta], kCalibrationKey, EncodeFeedbackHistogram({}));
  batch.Put(handles[kMeta], kSchemaVersionKey, "3");
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db.Write(write_options, &batch);
  if (!status.ok()) return RocksdbError("upgrading " + path, status);
  return {};
}

// The feedback histogram of the ledger's records, in the current layout: one pass over the
// ledger.
std::expected<model::FeedbackHistogram, Error> FeedbackFromLedger(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* ledger) {
  model::FeedbackHistogram histogram;
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(read_options, ledger));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto entry = DecodeLedgerEntry(std::string_view(it->value().data(), it->value().size()));
    if (!entry) return std::unexpected(entry.error());
    if (const auto cell = model::FeedbackCellOf(*entry)) histogram.Add(*cell);
  }
  if (!it->status().ok()) return RocksdbError("reading the training ledger", it->status());
  return histogram;
}

// Checks the schema version of an existing model (upgrading schema 1), or writes version and
// empty stats for a new one. Returns the stored stats.
std::expected<model::ModelStats, Error> InitialiseOrCheck(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  rocksdb::ColumnFamilyHandle* meta = handles[kMeta];
  auto version = GetMeta(db, meta, kSchemaVersionKey);
  if (!version) return std::unexpected(version.error());
  auto stats_value = GetMeta(db, meta, kModelStatsKey);
  if (!stats_value) return std::unexpected(stats_value.error());
  if (!*version) {
    if (*stats_value) {
      return MakeError(ErrorCode::kDataLoss,
                       "data folder " + path + " has a model but no schema version record");
    }
    model::ModelStats stats;
    for (std::string_view label : kDefaultLabels) {
      stats.classes.push_back({std::string(label), 0, 0});
    }
    rocksdb::WriteBatch batch;
    batch.Put(meta, kSchemaVersionKey, std::to_string(kSchemaVersion));
    batch.Put(meta, kModelStatsKey, EncodeModelStats(stats));
    batch.Put(meta, kCalibrationKey, EncodeFeedbackHistogram({}));
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    const rocksdb::Status status = db.Write(write_options, &batch);
    if (!status.ok()) return RocksdbError("initialising " + path, status);
    return stats;
  }
  std::uint64_t stored = 0;
  const std::string& text = **version;
  const auto [end, parse_error] = std::from_chars(text.data(), text.data() + text.size(), stored);
  if (parse_error != std::errc() || end != text.data() + text.size()) {
    return MakeError(ErrorCode::kDataLoss, "data folder " + path + " has a corrupt schema version");
  }
  if (stored == 1) {
    if (auto upgraded = UpgradeFromSchema1(db, handles, path); !upgraded) {
      return std::unexpected(upgraded.error());
    }
    stored = 2;
  }
  if (stored == 2) {
    if (auto upgraded = UpgradeFromSchema2(db, handles, path); !upgraded) {
      return std::unexpected(upgraded.error());
    }
    stored = 3;
  }
  if (stored != kSchemaVersion) {
    return MakeError(ErrorCode::kDataLoss, "data folder " + path + " holds schema version " + text +
                                               ", but this nbspamd reads version " +
                                               std::to_string(kSchemaVersion));
  }
  if (!*stats_value) {
    return MakeError(ErrorCode::kDataLoss, "data folder " + path + " has no model stats record");
  }
  return DecodeModelStats(**stats_value);
}

}  // namespace

std::expected<std::unique_ptr<RocksdbStore>, Error> RocksdbStore::Open(const std::string& path) {
  std::error_code created;
  std::filesystem::create_directories(path, created);
  if (created) {
    return MakeError(ErrorCode::kInternal,
                     "cannot create data folder " + path + ": " + created.message());
  }
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.IncreaseParallelism(2);
  // One thread writes (the training writer), so concurrent memtable inserts buy nothing; and
  // the tokens family's vector memtable below does not support them.
  options.allow_concurrent_memtable_write = false;

  std::vector<std::string> families;
  if (!rocksdb::DB::ListColumnFamilies(options, path, &families).ok()) families.clear();
  for (const char* required :
       {rocksdb::kDefaultColumnFamilyName.c_str(), kTokensFamily, kLedgerFamily, kSourcesFamily}) {
    if (std::find(families.begin(), families.end(), required) == families.end()) {
      families.emplace_back(required);
    }
  }
  // Meta, tokens, ledger and sources come first, in that order; any other family follows.
  std::stable_partition(families.begin(), families.end(), [](const std::string& name) {
    return name == rocksdb::kDefaultColumnFamilyName;
  });
  std::stable_partition(families.begin() + 1, families.end(),
                        [](const std::string& name) { return name == kTokensFamily; });
  std::stable_partition(families.begin() + 2, families.end(),
                        [](const std::string& name) { return name == kLedgerFamily; });
  std::stable_partition(families.begin() + 3, families.end(),
                        [](const std::string& name) { return name == kSourcesFamily; });
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : families) {
    rocksdb::ColumnFamilyOptions family_options(options);
    if (name == kTokensFamily) {
      // Token records are only ever read by the full scan at open (the count cache serves every
      // other read), so the tokens memtable can be an unsorted vector: an insert is an append,
      // where the default skip list spent most of the training writer's time (sorted once at
      // flush or scan instead).
      family_options.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
    }
    descriptors.emplace_back(name, family_options);
  }

  rocksdb::DB* raw_db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  const rocksdb::Status status =
      rocksdb::DB::Open(rocksdb::DBOptions(options), path, descriptors, &handles, &raw_db);
  if (!status.ok()) return RocksdbError("cannot open data folder " + path, status);
  std::unique_ptr<rocksdb::DB> db(raw_db);

  auto stats = InitialiseOrCheck(*db, handles, path);
  if (!stats) {
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    return std::unexpected(stats.error());
  }
  std::unique_ptr<RocksdbStore> store(
      new RocksdbStore(std::move(db), std::move(handles), std::move(*stats)));
  auto position = GetMeta(*store->db_, store->handles_[kMeta], kStreamPositionKey);
  if (!position) return std::unexpected(position.error());
  store->stream_position_ = position->value_or("");
  if (auto loaded = store->LoadTokens(); !loaded) return std::unexpected(loaded.error());
  if (auto loaded = store->LoadCalibration(); !loaded) return std::unexpected(loaded.error());
  return store;
}

RocksdbStore::RocksdbStore(std::unique_ptr<rocksdb::DB> db,
                           std::vector<rocksdb::ColumnFamilyHandle*> handles,
                           model::ModelStats stats)
    : db_(std::move(db)), handles_(std::move(handles)), cache_(std::move(stats)) {}

RocksdbStore::~RocksdbStore() {
  for (auto* handle : handles_) db_->DestroyColumnFamilyHandle(handle);
  db_->Close().PermitUncheckedError();
}

std::expected<void, Error> RocksdbStore::LoadTokens() {
  const model::ModelStats& stats = *cache_.Stats();
  // Size the tables once for |V| tokens, so that loading never rehashes; RocksDB's estimate of
  // the record count caps it, so that a corrupt |V| cannot ask for unbounded memory.
  std::uint64_t estimated_records = 0;
  if (!db_->GetIntProperty(handles_[kTokens], "rocksdb.estimate-num-keys", &estimated_records)) {
    estimated_records = 0;
  }
  cache_.Reserve(std::min(stats.vocabulary_size, 2 * estimated_records + 1024));

  std::vector<std::uint64_t> totals(stats.classes.size(), 0);
  std::uint64_t vocabulary = 0;
  // One sequential pass over every record: nothing is worth keeping in the block cache, and
  // large reads ahead keep the disk streaming.
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  read_options.readahead_size = std::size_t{4} << 20;
  read_options.adaptive_readahead = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, handles_[kTokens]));
  // Records go to the cache in batches whose count vectors are reused, so loading allocates
  // nothing per token.
  constexpr std::size_t kBatchSize = 32;
  std::vector<std::pair<TokenHash, TokenCounts>> batch(kBatchSize);
  std::size_t batched = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto hash = DecodeTokenKey(std::string_view(it->key().data(), it->key().size()));
    if (!hash) return std::unexpected(hash.error());
    auto& [batch_hash, counts] = batch[batched];
    batch_hash = *hash;
    auto decoded =
        DecodeTokenCountsInto(std::string_view(it->value().data(), it->value().size()), counts);
    if (!decoded) return std::unexpected(decoded.error());
    if (counts.size() > totals.size()) {
      return MakeError(ErrorCode::kDataLoss, "a token record names more classes than exist");
    }
    for (std::size_t c = 0; c < counts.size(); ++c) totals[c] += counts[c];
    ++vocabulary;
    if (++batched == kBatchSize) {
      cache_.LoadBatch(batch);
      batched = 0;
    }
  }
  cache_.LoadBatch(std::span(batch).first(batched));
  if (!it->status().ok()) return RocksdbError("loading tokens", it->status());
  // The stats must agree with the counts they summarise.
  for (std::size_t c = 0; c < totals.size(); ++c) {
    if (totals[c] != stats.classes[c].tokens) {
      return MakeError(ErrorCode::kDataLoss, "the token total of class '" + stats.classes[c].label +
                                                 "' does not match its token counts");
    }
  }
  if (vocabulary != stats.vocabulary_size) {
    return MakeError(ErrorCode::kDataLoss, "the vocabulary size does not match the token counts");
  }
  return {};
}

std::expected<void, Error> RocksdbStore::LoadCalibration() {
  auto stored = GetMeta(*db_, handles_[kMeta], kCalibrationKey);
  if (!stored) return std::unexpected(stored.error());
  std::optional<model::FeedbackHistogram> histogram;
  if (*stored) {
    auto decoded = DecodeFeedbackHistogram(**stored);
    if (!decoded) return std::unexpected(decoded.error());
    if (decoded->layout == model::CalibrationLayout{}) histogram = std::move(*decoded);
  }
  if (!histogram) {
    // Missing, or counted in another layout: count the ledger's held-out scores again.
    auto rebuilt = FeedbackFromLedger(*db_, handles_[kLedger]);
    if (!rebuilt) return std::unexpected(rebuilt.error());
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    const rocksdb::Status status = db_->Put(write_options, handles_[kMeta], kCalibrationKey,
                                            EncodeFeedbackHistogram(*rebuilt));
    if (!status.ok()) return RocksdbError("writing the calibration record", status);
    histogram = std::move(*rebuilt);
  }
  cache_.PublishCalibration(std::make_shared<const model::Calibration>(std::move(*histogram)));
  return {};
}

model::Snapshot RocksdbStore::Read(std::span<const BagEntry> entries) const {
  return cache_.Read(entries);
}

std::shared_ptr<const model::ModelStats> RocksdbStore::Stats() const { return cache_.Stats(); }

std::shared_ptr<const model::Calibration> RocksdbStore::Calibration() const {
  return cache_.Calibration();
}

std::expected<std::optional<model::LedgerEntry>, Error> RocksdbStore::FindLearned(
    std::string_view id) const {
  std::string value;
  const rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), handles_[kLedger],
                                          rocksdb::Slice(id.data(), id.size()), &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return RocksdbError("reading the training ledger", status);
  auto entry = DecodeLedgerEntry(value);
  if (!entry) return std::unexpected(entry.error());
  return std::move(*entry);
}

std::expected<BatchResults, Error> RocksdbStore::ApplyBatch(std::span<const model::Delta> deltas) {
  DeltaResolver resolver(cache_);
  BatchResults results;
  results.reserve(deltas.size());
  for (const model::Delta& delta : deltas) results.push_back(resolver.Add(delta));
  if (std::none_of(results.begin(), results.end(), [](const auto& r) { return r.has_value(); })) {
    return results;  // Nothing to write.
  }
  ResolvedDelta resolved = std::move(resolver).Take();

  // One batch for everything: the final counts of each token, the ledger records in the order of
  // the deltas (a later record of the same id replaces an earlier one), the stats, the position.
  rocksdb::WriteBatch batch;
  for (const auto& [hash, counts] : resolved.tokens) {
    const std::string key = EncodeTokenKey(hash);
    if (counts.empty()) {
      batch.Delete(handles_[kTokens], key);
    } else {
      batch.Put(handles_[kTokens], key, EncodeTokenCounts(counts));
    }
  }
  const std::string* stream_position = nullptr;
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (!results[i]) continue;
    const model::Delta& delta = deltas[i];
    if (delta.replaced_origin) {
      batch.Delete(handles_[kSources], EncodeSourceKey(delta.ledger_id, *delta.replaced_origin));
    }
    if (delta.ledger_entry) {
      batch.Put(handles_[kLedger], delta.ledger_id, EncodeLedgerEntry(*delta.ledger_entry));
      batch.Put(handles_[kSources], EncodeSourceKey(delta.ledger_id, delta.ledger_entry->origin),
                "");
    } else if (!delta.ledger_id.empty()) {
      batch.Delete(handles_[kLedger], delta.ledger_id);
    }
    if (!delta.stream_position.empty()) stream_position = &delta.stream_position;
  }
  batch.Put(handles_[kMeta], kModelStatsKey, EncodeModelStats(resolved.stats));
  if (resolved.feedback) {
    batch.Put(handles_[kMeta], kCalibrationKey, EncodeFeedbackHistogram(*resolved.feedback));
  }
  if (stream_position != nullptr) batch.Put(handles_[kMeta], kStreamPositionKey, *stream_position);
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db_->Write(write_options, &batch);
  if (!status.ok()) return RocksdbError("writing a training change", status);

  if (stream_position != nullptr) {
    std::lock_guard lock(position_mutex_);
    stream_position_ = *stream_position;
  }
  cache_.Publish(resolved.tokens,
                 std::make_shared<const model::ModelStats>(std::move(resolved.stats)));
  if (resolved.feedback) {
    // Fitting is a pass over the bins: microseconds, on the writer's thread.
    cache_.PublishCalibration(
        std::make_shared<const model::Calibration>(std::move(*resolved.feedback)));
  }
  return results;
}

std::string RocksdbStore::StreamPosition() const {
  std::lock_guard lock(position_mutex_);
  return stream_position_;
}

std::expected<std::vector<LearnedMessage>, Error> RocksdbStore::ListLearned(
    std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit) const {
  std::vector<LearnedMessage> found;
  if (since >= until) return found;
  // One view for the index and the records it points to.
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot;
  const std::string end = SourceKeyPrefix(source, until);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, handles_[kSources]));
  std::expected<void, Error> failed;
  for (it->Seek(SourceKeyPrefix(source, since)); it->Valid() && found.size() < limit; it->Next()) {
    if (it->key().compare(end) >= 0) break;
    auto key = DecodeSourceKey(it->key().ToStringView());
    if (!key) {
      failed = std::unexpected(key.error());
      break;
    }
    std::string value;
    const rocksdb::Status status =
        db_->Get(read_options, handles_[kLedger], rocksdb::Slice(key->id), &value);
    auto entry = status.ok() ? DecodeLedgerEntry(value)
                             : std::expected<model::LedgerEntry, Error>(
                                   RocksdbError("reading the training ledger", status));
    if (!entry) {
      failed = std::unexpected(entry.error());
      break;
    }
    found.push_back({std::move(key->id), std::move(entry->label), std::move(entry->origin)});
  }
  if (failed && !it->status().ok()) failed = RocksdbError("reading the source index", it->status());
  it.reset();
  db_->ReleaseSnapshot(snapshot);
  if (!failed) return std::unexpected(failed.error());
  return found;
}

std::vector<StorageProperty> RocksdbStore::Properties() const {
  std::vector<StorageProperty> properties;
  const auto aggregated = [&](const char* property, std::string name, std::string help) {
    std::uint64_t value = 0;
    if (db_->GetAggregatedIntProperty(property, &value)) {
      properties.push_back({std::move(name), std::move(help), static_cast<double>(value)});
    }
  };
  aggregated("rocksdb.total-sst-files-size", "nbspamd_storage_sst_bytes",
             "Bytes of RocksDB table files, all versions.");
  aggregated("rocksdb.live-sst-files-size", "nbspamd_storage_live_sst_bytes",
             "Bytes of the RocksDB table files the current version uses.");
  aggregated("rocksdb.cur-size-all-mem-tables", "nbspamd_storage_memtable_bytes",
             "Bytes in RocksDB memtables.");
  aggregated("rocksdb.estimate-pending-compaction-bytes",
             "nbspamd_storage_pending_compaction_bytes",
             "Bytes RocksDB estimates compaction still has to rewrite.");
  aggregated("rocksdb.num-running-compactions", "nbspamd_storage_running_compactions",
             "RocksDB compactions running now.");
  std::uint64_t ledger = 0;
  if (db_->GetIntProperty(handles_[kLedger], "rocksdb.estimate-num-keys", &ledger)) {
    properties.push_back({"nbspamd_storage_ledger_records_estimate",
                          "RocksDB's estimate of the training ledger's records.",
                          static_cast<double>(ledger)});
  }
  rocksdb::VectorLogPtr logs;
  if (db_->GetSortedWalFiles(logs).ok()) {
    double bytes = 0;
    for (const auto& log : logs) bytes += static_cast<double>(log->SizeFileBytes());
    properties.push_back(
        {"nbspamd_storage_wal_bytes", "Bytes of live RocksDB write-ahead logs.", bytes});
    properties.push_back({"nbspamd_storage_wal_files", "Live RocksDB write-ahead log files.",
                          static_cast<double>(logs.size())});
  }
  return properties;
}

std::expected<void, Error> RocksdbStore::Checkpoint(const std::string& path) {
  std::error_code exists_error;
  if (std::filesystem::exists(path, exists_error)) {
    return MakeError(ErrorCode::kInvalidArgument, "backup folder " + path + " exists already");
  }
  if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty()) {
    std::error_code created;
    std::filesystem::create_directories(parent, created);
    if (created) {
      return MakeError(ErrorCode::kInternal,
                       "cannot create folder " + parent.string() + ": " + created.message());
    }
  }
  rocksdb::Checkpoint* raw_checkpoint = nullptr;
  rocksdb::Status status = rocksdb::Checkpoint::Create(db_.get(), &raw_checkpoint);
  if (!status.ok()) return RocksdbError("starting a backup", status);
  const std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw_checkpoint);
  // Every training change is one WriteBatch through the shared write-ahead log, and a checkpoint
  // is one point of that log: its families agree with each other as the live ones do. RocksDB
  // builds it in a temporary folder and renames it into place, so a failure leaves no `path`.
  status = checkpoint->CreateCheckpoint(path);
  if (!status.ok()) return RocksdbError("writing the backup " + path, status);
  return {};
}

}  // namespace nbspamd::storage
