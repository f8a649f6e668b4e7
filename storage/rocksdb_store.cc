// RocksdbStore: opening a model folder, reading it, and the write path. Its faults and recovery
// are in rocksdb_store_recovery.cc, its user layers in rocksdb_store_users.cc.
#include "storage/rocksdb_store.h"

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/options.h>
#include <rocksdb/snapshot.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "model/user_layer.h"
#include "storage/encoding.h"
#include "storage/model_transfer.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_logger.h"
#include "storage/rocksdb_schema.h"
#include "storage/rocksdb_status.h"
#include "storage/training_batch.h"

namespace nbspamd::storage {

std::expected<std::unique_ptr<RocksdbStore>, Error> RocksdbStore::Open(
    const std::string& path, RocksdbStoreOptions options) {
  std::error_code created;
  std::filesystem::create_directories(path, created);
  if (created) {
    return MakeError(ErrorCode::kInternal,
                     "cannot create data folder " + path + ": " + created.message());
  }
  std::shared_ptr<rocksdb::Env> env;
  if (options.file_system) env = rocksdb::NewCompositeEnv(options.file_system);
  auto logger = std::make_shared<RocksdbLogger>(std::move(options.log));
  auto database = RocksdbDatabase::Open(path, env.get(), logger, RocksdbDatabase::Mode::kReadWrite);
  std::optional<rocksdb::Status> write_fault;
  const auto fault = database ? std::nullopt : FaultOf(database.error());
  if (fault == WriteFault::kDiskFull || fault == WriteFault::kReadOnly) {
    // A model on a full or read-only disk still classifies: open it read-only.
    write_fault = database.error();
    database = RocksdbDatabase::Open(path, env.get(), logger, RocksdbDatabase::Mode::kReadOnly);
    if (!database) return RocksdbError("cannot open data folder " + path, *write_fault);
  }
  if (!database) return RocksdbError("cannot open data folder " + path, database.error());

  auto stats = InitialiseOrCheck(**database, path);
  if (!stats) return std::unexpected(stats.error());
  std::unique_ptr<RocksdbStore> store(new RocksdbStore(
      path, std::move(env), std::move(logger), std::move(*database), std::move(*stats), options));
  if (write_fault) {
    const Error stopped = store->StopWrites("opening the data folder", *write_fault);
    // Said once where the operator looks at start-up; /readyz and /metrics go on saying it.
    rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, store->logger_,
                 "the model opened read-only, training is refused until it can write: %s",
                 stopped.message.c_str());
  }
  auto position =
      GetMeta(store->database_->db(), store->database_->family(kMeta), kStreamPositionKey);
  if (!position) return std::unexpected(position.error());
  store->stream_position_ = position->value_or("");
  if (auto loaded = store->LoadTokens(); !loaded) return std::unexpected(loaded.error());
  if (auto loaded = store->LoadCalibration(); !loaded) return std::unexpected(loaded.error());
  auto users = store->CountUsers();
  if (!users) return std::unexpected(users.error());
  store->user_count_.store(*users);
  return store;
}

RocksdbStore::RocksdbStore(std::string path, std::shared_ptr<rocksdb::Env> env,
                           std::shared_ptr<rocksdb::Logger> logger,
                           std::unique_ptr<RocksdbDatabase> database, model::ModelStats stats,
                           const RocksdbStoreOptions& options)
    : path_(std::move(path)),
      env_(std::move(env)),
      logger_(std::move(logger)),
      resume_free_bytes_(options.resume_free_bytes),
      user_token_limit_(options.user_token_limit),
      database_(std::move(database)),
      cache_(std::move(stats)),
      user_cache_(options.user_cache_bytes) {}

// The database closes before the Env it writes through.
RocksdbStore::~RocksdbStore() { database_.reset(); }

std::expected<void, Error> RocksdbStore::LoadTokens() {
  const model::ModelStats& stats = *cache_.Stats();
  // Size the tables once for |V| tokens, so that loading never rehashes; RocksDB's estimate of
  // the record count caps it, so that a corrupt |V| cannot ask for unbounded memory.
  std::uint64_t estimated_records = 0;
  if (!database_->db().GetIntProperty(database_->family(kTokens), "rocksdb.estimate-num-keys",
                                      &estimated_records)) {
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
  std::unique_ptr<rocksdb::Iterator> it(
      database_->db().NewIterator(read_options, database_->family(kTokens)));
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
  auto stored = GetMeta(database_->db(), database_->family(kMeta), kCalibrationKey);
  if (!stored) return std::unexpected(stored.error());
  std::optional<model::FeedbackHistogram> histogram;
  if (*stored) {
    auto decoded = DecodeFeedbackHistogram(**stored);
    if (!decoded) return std::unexpected(decoded.error());
    if (decoded->layout == model::CalibrationLayout{}) histogram = std::move(*decoded);
  }
  if (!histogram) {
    // Missing, or counted in another layout: count the ledger's held-out scores again.
    auto rebuilt = FeedbackFromLedger(database_->db(), database_->family(kLedger));
    if (!rebuilt) return std::unexpected(rebuilt.error());
    if (database_->read_only()) {
      // Counted again at the next open that can write.
      cache_.PublishFeedback(std::make_shared<const model::FeedbackHistogram>(std::move(*rebuilt)));
      return {};
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    const rocksdb::Status status =
        database_->db().Put(write_options, database_->family(kMeta), kCalibrationKey,
                            EncodeFeedbackHistogram(*rebuilt));
    if (!status.ok()) return RocksdbError("writing the calibration record", status);
    histogram = std::move(*rebuilt);
  }
  cache_.PublishFeedback(std::make_shared<const model::FeedbackHistogram>(std::move(*histogram)));
  return {};
}

model::Snapshot RocksdbStore::Read(std::span<const BagEntry> entries) const {
  return cache_.Read(entries);
}

std::shared_ptr<const model::ModelStats> RocksdbStore::Stats() const { return cache_.Stats(); }

std::shared_ptr<const model::FeedbackHistogram> RocksdbStore::Feedback() const {
  return cache_.Feedback();
}

std::expected<std::optional<model::LedgerEntry>, Error> RocksdbStore::FindLearned(
    std::string_view id) const {
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  std::string value;
  const rocksdb::Status status =
      database_->db().Get(rocksdb::ReadOptions(), database_->family(kLedger),
                          rocksdb::Slice(id.data(), id.size()), &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return RocksdbError("reading the training ledger", status);
  auto entry = DecodeLedgerEntry(value);
  if (!entry) return std::unexpected(entry.error());
  return std::move(*entry);
}

std::expected<BatchResults, Error> RocksdbStore::ApplyBatch(std::span<const model::Delta> deltas) {
  std::lock_guard write_lock(write_mutex_);
  return ApplyBatchLocked(deltas);
}

std::expected<BatchResults, Error> RocksdbStore::ApplyBatchLocked(
    std::span<const model::Delta> deltas,
    const std::function<void(const RocksdbDatabase&, rocksdb::WriteBatch&, const BatchResults&)>&
        extra,
    bool sync) {
  // After a failed write RocksDB must not be sent another one until the database is reopened.
  if (!writable_.load()) return std::unexpected(StoppedError());
  if (std::any_of(deltas.begin(), deltas.end(),
                  [](const model::Delta& d) { return d.user.has_value(); })) {
    std::unique_lock lock(database_mutex_);
    if (auto created = database_->CreateFamily(kUsers); !created) {
      if (!FaultOf(created.error()))
        return RocksdbError("creating the users family", created.error());
      lock.unlock();
      return std::unexpected(StopWrites("creating the users family", created.error()));
    }
  }
  std::shared_lock database_lock(database_mutex_);
  // The writer reads the layers it changes from the cache, or from the database (which only it
  // writes, so a load is current).
  DeltaResolver resolver(
      cache_,
      [this](const std::string& user) -> std::expected<std::shared_ptr<UserLayer>, Error> {
        if (auto layer = user_cache_.Find(user)) return layer;
        return LoadUser(user);
      },
      user_token_limit_);
  BatchResults results;
  results.reserve(deltas.size());
  for (const model::Delta& delta : deltas) results.push_back(resolver.Add(delta));
  if (std::none_of(results.begin(), results.end(), [](const auto& r) { return r.has_value(); })) {
    return results;  // Nothing to write.
  }
  ResolvedDelta resolved = std::move(resolver).Take();

  // One batch for everything (training_batch.h says what, in which order).
  rocksdb::WriteBatch batch;
  struct BatchSink {
    const RocksdbDatabase& database;
    rocksdb::WriteBatch& batch;
    void Put(FamilyIndex family, std::string_view key, std::string_view value) {
      batch.Put(database.family(family), key, value);
    }
    void Delete(FamilyIndex family, std::string_view key) {
      batch.Delete(database.family(family), key);
    }
  } sink{*database_, batch};
  const std::string* stream_position = EncodeTrainingBatch(resolved, deltas, results, sink);
  if (extra) extra(*database_, batch, results);
  rocksdb::WriteOptions write_options;
  write_options.sync = sync;
  const rocksdb::Status status = database_->db().Write(write_options, &batch);
  if (!status.ok()) {
    if (!FaultOf(status)) return RocksdbError("writing a training change", status);
    in_doubt_ = InDoubtWrite{std::move(resolved),
                             stream_position != nullptr ? *stream_position : std::string()};
    return std::unexpected(StopWrites("writing a training change", status));
  }

  if (stream_position != nullptr) {
    std::lock_guard lock(position_mutex_);
    stream_position_ = *stream_position;
  }
  for (ResolvedUser& user : resolved.users) {
    const bool empty = IsEmptyLayer(user.stats);
    if (!user.existed && !empty) ++user_count_;
    if (user.existed && empty) --user_count_;
    user.layer->Set(user.tokens, std::move(user.stats));
    user_cache_.Published(user.user, std::move(user.layer));
  }
  cache_.Publish(resolved.tokens,
                 std::make_shared<const model::ModelStats>(std::move(resolved.stats)));
  if (resolved.feedback) {
    // Fitting is a pass over the bins: microseconds, on the writer's thread.
    cache_.PublishFeedback(
        std::make_shared<const model::FeedbackHistogram>(std::move(*resolved.feedback)));
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
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  // One view for the index and the records it points to.
  const rocksdb::Snapshot* snapshot = database_->db().GetSnapshot();
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot;
  const std::string end = SourceKeyPrefix(source, until);
  std::unique_ptr<rocksdb::Iterator> it(
      database_->db().NewIterator(read_options, database_->family(kSources)));
  std::expected<void, Error> failed;
  for (it->Seek(SourceKeyPrefix(source, since)); it->Valid() && found.size() < limit; it->Next()) {
    if (it->key().compare(end) >= 0) break;
    auto key = DecodeSourceKey(it->key().ToStringView());
    if (!key) {
      failed = std::unexpected(key.error());
      break;
    }
    std::string value;
    const rocksdb::Status status = database_->db().Get(read_options, database_->family(kLedger),
                                                       rocksdb::Slice(key->id), &value);
    auto entry = status.ok() ? DecodeLedgerEntry(value)
                             : std::expected<model::LedgerEntry, Error>(
                                   RocksdbError("reading the training ledger", status));
    if (!entry) {
      failed = std::unexpected(entry.error());
      break;
    }
    found.push_back(
        {std::move(key->id), std::move(entry->label), std::move(entry->origin), entry->checked});
  }
  if (failed && !it->status().ok()) failed = RocksdbError("reading the source index", it->status());
  it.reset();
  database_->db().ReleaseSnapshot(snapshot);
  if (!failed) return std::unexpected(failed.error());
  return found;
}

std::vector<StorageProperty> RocksdbStore::Properties() const {
  std::vector<StorageProperty> properties;
  std::shared_lock lock(database_mutex_);
  if (!database_) return properties;
  const auto aggregated = [&](const char* property, std::string name, std::string help) {
    std::uint64_t value = 0;
    if (database_->db().GetAggregatedIntProperty(property, &value)) {
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
  if (database_->db().GetIntProperty(database_->family(kLedger), "rocksdb.estimate-num-keys",
                                     &ledger)) {
    properties.push_back({"nbspamd_storage_ledger_records_estimate",
                          "RocksDB's estimate of the training ledger's records.",
                          static_cast<double>(ledger)});
  }
  const UserLayerFigures users = UserFigures();
  properties.push_back({"nbspamd_storage_user_layers", "Users with a layer of their own.",
                        static_cast<double>(users.users)});
  properties.push_back({"nbspamd_storage_user_cache_layers", "User layers held in memory.",
                        static_cast<double>(users.cached_layers)});
  properties.push_back({"nbspamd_storage_user_cache_bytes", "Bytes of the user layers in memory.",
                        static_cast<double>(users.cache_bytes)});
  properties.push_back({"nbspamd_storage_user_cache_misses",
                        "User layer reads that loaded the layer from disk, since start.",
                        static_cast<double>(users.cache_misses)});
  rocksdb::VectorLogPtr logs;
  if (database_->db().GetSortedWalFiles(logs).ok()) {
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
  if (!writable_.load()) return std::unexpected(StoppedError());
  std::shared_lock lock(database_mutex_);
  rocksdb::Checkpoint* raw_checkpoint = nullptr;
  rocksdb::Status status = rocksdb::Checkpoint::Create(&database_->db(), &raw_checkpoint);
  if (!status.ok()) return RocksdbError("starting a backup", status);
  const std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw_checkpoint);
  // Every training change is one WriteBatch through the shared write-ahead log, and a checkpoint
  // is one point of that log: its families agree with each other as the live ones do. RocksDB
  // builds it in a temporary folder and renames it into place, so a failure leaves no `path`.
  status = checkpoint->CreateCheckpoint(path);
  if (status.IsNoSpace()) {
    return MakeError(ErrorCode::kInsufficientStorage,
                     "the disk of backup folder " + path + " is full: " + status.ToString());
  }
  if (!status.ok()) return RocksdbError("writing the backup " + path, status);
  return {};
}

std::expected<void, Error> RocksdbStore::FlushMemoryTables() {
  if (!writable_.load()) return std::unexpected(StoppedError());
  std::shared_lock lock(database_mutex_);
  if (!database_) return MakeError(ErrorCode::kUnavailable, "the model's database is not open");
  std::vector<rocksdb::ColumnFamilyHandle*> families;
  for (rocksdb::ColumnFamilyHandle* family : database_->families()) {
    if (family != nullptr) families.push_back(family);  // The optional ones not yet created.
  }
  rocksdb::FlushOptions options;
  options.wait = true;
  options.allow_write_stall = false;  // Waits rather than stall training's writes.
  const rocksdb::Status status = database_->db().Flush(options, families);
  if (!status.ok()) return RocksdbError("flushing the memory tables", status);
  return {};
}

std::expected<void, Error> RocksdbStore::Export(ModelVisitor& visitor) const {
  std::shared_lock lock(database_mutex_);
  if (!database_) return MakeError(ErrorCode::kUnavailable, "the model's database is not open");
  return ExportDatabase(database_->db(), database_->family(kMeta), database_->family(kTokens),
                        database_->family(kUsers), visitor);
}

}  // namespace nbspamd::storage
