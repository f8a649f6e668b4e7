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
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_logger.h"

namespace nbspamd::storage {
namespace {

std::unexpected<Error> RocksdbError(std::string_view what, const rocksdb::Status& status) {
  const ErrorCode code = status.IsCorruption() ? ErrorCode::kDataLoss : ErrorCode::kInternal;
  return MakeError(code, std::string(what) + ": " + status.ToString());
}

// The fault of the machine behind a failed write, if it is one: RocksDB reports ENOSPC as
// NoSpace, and EROFS and EIO as IOError with strerror's text.
std::optional<WriteFault> FaultOf(const rocksdb::Status& status) {
  if (status.IsNoSpace()) return WriteFault::kDiskFull;
  if (!status.IsIOError()) return std::nullopt;
  if (status.ToString().find("Read-only file system") != std::string::npos) {
    return WriteFault::kReadOnly;
  }
  return WriteFault::kIoError;
}

// "12.5 MiB"
std::string ByteText(std::uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes < (std::uint64_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < (std::uint64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  }
  return text;
}

// The space free to unprivileged users in the file system of `path`; nullopt when unknown.
std::optional<std::uint64_t> FreeBytes(const std::string& path) {
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(path, error);
  if (error) return std::nullopt;
  return space.available;
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
// A database opened read-only can be neither initialised nor upgraded.
std::expected<model::ModelStats, Error> InitialiseOrCheck(const RocksdbDatabase& database,
                                                          const std::string& path) {
  rocksdb::DB& db = database.db();
  const std::vector<rocksdb::ColumnFamilyHandle*>& handles = database.families();
  rocksdb::ColumnFamilyHandle* meta = handles[kMeta];
  const auto writable = [&]() -> std::expected<void, Error> {
    if (!database.read_only()) return {};
    return MakeError(ErrorCode::kInternal, "data folder " + path +
                                               " must be initialised or upgraded, but its disk "
                                               "takes no writes");
  };
  auto version = GetMeta(db, meta, kSchemaVersionKey);
  if (!version) return std::unexpected(version.error());
  auto stats_value = GetMeta(db, meta, kModelStatsKey);
  if (!stats_value) return std::unexpected(stats_value.error());
  if (!*version) {
    if (*stats_value) {
      return MakeError(ErrorCode::kDataLoss,
                       "data folder " + path + " has a model but no schema version record");
    }
    if (auto can = writable(); !can) return std::unexpected(can.error());
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
  if (stored == 1 || stored == 2) {
    if (auto can = writable(); !can) return std::unexpected(can.error());
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
      cache_.PublishCalibration(std::make_shared<const model::Calibration>(std::move(*rebuilt)));
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
  // After a failed write RocksDB must not be sent another one until the database is reopened.
  if (!writable_.load()) return std::unexpected(StoppedError());
  if (std::any_of(deltas.begin(), deltas.end(),
                  [](const model::Delta& d) { return d.user.has_value(); })) {
    std::unique_lock lock(database_mutex_);
    if (auto created = database_->CreateUsersFamily(); !created) {
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

  // One batch for everything: the final counts of each token, the ledger records in the order of
  // the deltas (a later record of the same id replaces an earlier one), the stats, the position.
  rocksdb::WriteBatch batch;
  for (const auto& [hash, counts] : resolved.tokens) {
    const std::string key = EncodeTokenKey(hash);
    if (counts.empty()) {
      batch.Delete(database_->family(kTokens), key);
    } else {
      batch.Put(database_->family(kTokens), key, EncodeTokenCounts(counts));
    }
  }
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  for (const ResolvedUser& user : resolved.users) {
    for (const auto& [hash, counts] : user.tokens) {
      const std::string key = UserTokenKey(user.user, hash);
      if (counts.empty()) {
        batch.Delete(users, key);
      } else {
        batch.Put(users, key, EncodeTokenCounts(counts));
      }
    }
    if (IsEmptyLayer(user.stats)) {
      batch.Delete(users, UserStatsKey(user.user));
    } else {
      batch.Put(users, UserStatsKey(user.user), EncodeModelStats(user.stats));
    }
  }
  const std::string* stream_position = nullptr;
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (!results[i]) continue;
    const model::Delta& delta = deltas[i];
    if (delta.user) {
      const model::UserLayerChange& change = *delta.user;
      if (change.replaced_origin) {
        batch.Delete(users, UserSourceKey(change.user, change.ledger_id, *change.replaced_origin));
      }
      if (change.ledger_entry) {
        batch.Put(users, UserLedgerKey(change.user, change.ledger_id),
                  EncodeLedgerEntry(*change.ledger_entry));
        batch.Put(users, UserSourceKey(change.user, change.ledger_id, change.ledger_entry->origin),
                  "");
      } else if (!change.ledger_id.empty()) {
        batch.Delete(users, UserLedgerKey(change.user, change.ledger_id));
      }
    }
    if (delta.replaced_origin) {
      batch.Delete(database_->family(kSources),
                   EncodeSourceKey(delta.ledger_id, *delta.replaced_origin));
    }
    if (delta.ledger_entry) {
      batch.Put(database_->family(kLedger), delta.ledger_id,
                EncodeLedgerEntry(*delta.ledger_entry));
      batch.Put(database_->family(kSources),
                EncodeSourceKey(delta.ledger_id, delta.ledger_entry->origin), "");
    } else if (!delta.ledger_id.empty()) {
      batch.Delete(database_->family(kLedger), delta.ledger_id);
    }
    if (!delta.stream_position.empty()) stream_position = &delta.stream_position;
  }
  batch.Put(database_->family(kMeta), kModelStatsKey, EncodeModelStats(resolved.stats));
  if (resolved.feedback) {
    batch.Put(database_->family(kMeta), kCalibrationKey,
              EncodeFeedbackHistogram(*resolved.feedback));
  }
  if (stream_position != nullptr)
    batch.Put(database_->family(kMeta), kStreamPositionKey, *stream_position);
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
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
    found.push_back({std::move(key->id), std::move(entry->label), std::move(entry->origin)});
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

WriteHealth RocksdbStore::Health() const {
  std::lock_guard lock(health_mutex_);
  WriteHealth health = health_;
  health.writable = writable_.load();
  if (health.writable) health.reason.clear();
  return health;
}

Error RocksdbStore::StopWrites(std::string_view what, const rocksdb::Status& status, bool count) {
  const WriteFault fault = FaultOf(status).value_or(WriteFault::kIoError);
  std::string reason;
  switch (fault) {
    case WriteFault::kDiskFull: {
      const auto free = FreeBytes(path_);
      reason = "disk full: the file system of data folder " + path_ + " has " +
               (free ? ByteText(*free) : std::string("no space")) +
               " free; training resumes by itself once " +
               (resume_free_bytes_ > 0 ? ByteText(resume_free_bytes_) + " are free"
                                       : std::string("space is freed"));
      break;
    }
    case WriteFault::kReadOnly:
      reason = "read-only file system: data folder " + path_ +
               " takes no writes; training resumes by itself once it is writable again";
      break;
    case WriteFault::kIoError:
      reason = "I/O error in data folder " + path_ + "; training resumes by itself if it clears";
      break;
  }
  {
    std::lock_guard lock(health_mutex_);
    if (count) ++health_.errors[static_cast<std::size_t>(fault)];
    health_.fault = fault;
    health_.reason = reason + " (" + std::string(what) + ": " + status.ToString() + ")";
  }
  writable_.store(false);
  return StoppedError();
}

Error RocksdbStore::StoppedError() const {
  std::lock_guard lock(health_mutex_);
  const ErrorCode code = health_.fault == WriteFault::kDiskFull ? ErrorCode::kInsufficientStorage
                                                                : ErrorCode::kUnavailable;
  return Error{code, "training is paused: " + health_.reason + "; classify goes on"};
}

std::expected<void, Error> RocksdbStore::Recover() {
  std::lock_guard write_lock(write_mutex_);
  if (writable_.load()) return {};
  if (!recoverable_) return std::unexpected(StoppedError());
  if (Health().fault == WriteFault::kDiskFull && resume_free_bytes_ > 0) {
    const auto free = FreeBytes(path_);
    if (free && *free < resume_free_bytes_) return std::unexpected(StoppedError());
  }
  auto reopened = Reopen();
  if (!reopened && reopened.error().code == ErrorCode::kDataLoss) {
    // Memory and disk disagree in a way a reopen cannot explain: only a restart, which loads
    // the model from disk, settles it.
    recoverable_ = false;
    std::lock_guard lock(health_mutex_);
    health_.fault = WriteFault::kIoError;
    health_.reason = reopened.error().message;
  }
  if (!reopened) return reopened;
  {
    std::lock_guard lock(health_mutex_);
    ++health_.recoveries;
    health_.reason.clear();
  }
  writable_.store(true);
  return {};
}

std::expected<void, Error> RocksdbStore::Reopen() {
  std::unique_lock lock(database_mutex_);
  database_.reset();  // Closes it: RocksDB releases its lock on the folder.
  auto database =
      RocksdbDatabase::Open(path_, env_.get(), logger_, RocksdbDatabase::Mode::kReadWrite);
  if (!database) {
    // Keep the ledger readable while writes wait.
    const rocksdb::Status failed = database.error();
    auto read_only =
        RocksdbDatabase::Open(path_, env_.get(), logger_, RocksdbDatabase::Mode::kReadOnly);
    if (read_only) database_ = std::move(*read_only);
    lock.unlock();
    return std::unexpected(StopWrites("reopening the data folder", failed, /*count=*/false));
  }
  database_ = std::move(*database);
  // The write that failed (if any) is now either wholly on disk or not at all: the stats record,
  // written in every batch, tells which, and memory follows. User layers are read again from
  // disk when next needed, and the stream position and user count are read again too (a
  // DeleteUser writes neither stats nor counts).
  auto stored = InitialiseOrCheck(*database_, path_);
  if (!stored) return std::unexpected(stored.error());
  user_cache_.Clear();
  auto users = CountUsers();
  if (!users) return std::unexpected(users.error());
  user_count_.store(*users);
  auto position = GetMeta(database_->db(), database_->family(kMeta), kStreamPositionKey);
  if (!position) return std::unexpected(position.error());
  {
    std::lock_guard position_lock(position_mutex_);
    stream_position_ = position->value_or("");
  }
  const std::shared_ptr<const model::ModelStats> current = cache_.Stats();
  std::optional<InDoubtWrite> in_doubt = std::move(in_doubt_);
  in_doubt_.reset();
  if (*stored == *current) return {};
  if (in_doubt && *stored == in_doubt->resolved.stats) {
    ResolvedDelta& resolved = in_doubt->resolved;
    if (!in_doubt->stream_position.empty()) {
      std::lock_guard position_lock(position_mutex_);
      stream_position_ = in_doubt->stream_position;
    }
    cache_.Publish(resolved.tokens,
                   std::make_shared<const model::ModelStats>(std::move(resolved.stats)));
    if (resolved.feedback) {
      cache_.PublishCalibration(
          std::make_shared<const model::Calibration>(std::move(*resolved.feedback)));
    }
    return {};
  }
  return MakeError(ErrorCode::kDataLoss, "after a write fault the model in data folder " + path_ +
                                             " differs from the one in memory; restart nbspamd");
}

std::expected<std::shared_ptr<UserLayer>, Error> RocksdbStore::LoadUser(
    std::string_view user) const {
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return std::make_shared<UserLayer>();  // A folder without layers.
  // The stats record (kind 's') sorts just before the token records (kind 't'): one scan from
  // the one to the end of the other reads the whole layer, at one point in time.
  const std::string begin = UserStatsKey(user);
  const std::string tokens_begin = UserKindPrefix(user, kUserTokenKind);
  const std::string end = UserKindPrefix(user, kUserTokenKind + 1);
  const rocksdb::Slice upper_bound(end);
  rocksdb::ReadOptions read_options;
  read_options.iterate_upper_bound = &upper_bound;
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, users));
  it->Seek(begin);
  if (!it->Valid() || it->key() != rocksdb::Slice(begin)) {
    if (!it->status().ok()) return RocksdbError("reading a user layer", it->status());
    return std::make_shared<UserLayer>();  // No stats record: no layer (and so no tokens).
  }
  auto stats = DecodeModelStats(std::string_view(it->value().data(), it->value().size()));
  if (!stats) return std::unexpected(stats.error());
  // Sized for the user's tokens, capped so that a corrupt count cannot ask for unbounded memory.
  auto layer = std::make_shared<UserLayer>(
      std::min<std::uint64_t>(stats->vocabulary_size, std::uint64_t{1} << 20));
  TokenCounts counts;
  std::uint64_t tokens = 0;
  for (it->Next(); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    auto hash = DecodeTokenKey(key.substr(tokens_begin.size()));
    if (!hash) return std::unexpected(hash.error());
    auto decoded =
        DecodeTokenCountsInto(std::string_view(it->value().data(), it->value().size()), counts);
    if (!decoded) return std::unexpected(decoded.error());
    layer->Load(*hash, counts);
    ++tokens;
  }
  if (!it->status().ok()) return RocksdbError("reading a user layer", it->status());
  if (tokens != stats->vocabulary_size) {
    return MakeError(ErrorCode::kDataLoss, "the layer of user '" + std::string(user) +
                                               "' has a token count that does not match its stats");
  }
  layer->LoadStats(std::move(*stats));
  return layer;
}

std::expected<std::shared_ptr<UserLayer>, Error> RocksdbStore::CachedUser(
    std::string_view user) const {
  if (auto layer = user_cache_.Find(user)) return layer;
  const std::uint64_t generation = user_cache_.Generation();
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  auto loaded = LoadUser(user);
  if (!loaded) return std::unexpected(loaded.error());
  return user_cache_.InsertLoaded(std::string(user), std::move(*loaded), generation);
}

std::expected<std::uint64_t, Error> RocksdbStore::CountUsers() const {
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return 0;
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, users));
  std::uint64_t count = 0;
  it->SeekToFirst();
  while (it->Valid()) {
    auto key = DecodeUserKey(std::string_view(it->key().data(), it->key().size()));
    if (!key) return std::unexpected(key.error());
    const std::string user(key->user);
    const std::string stats_key = UserStatsKey(user);
    it->Seek(stats_key);
    if (it->Valid() && it->key() == rocksdb::Slice(stats_key)) ++count;
    it->Seek(UserKeyEnd(user));
  }
  if (!it->status().ok()) return RocksdbError("counting user layers", it->status());
  return count;
}

std::expected<std::optional<model::Snapshot>, Error> RocksdbStore::ReadUser(
    std::string_view user, const model::ModelStats& global,
    std::span<const BagEntry> entries) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  auto layer = CachedUser(user);
  if (!layer) return std::unexpected(layer.error());
  return (*layer)->Read(global, entries);
}

std::expected<std::optional<model::ModelStats>, Error> RocksdbStore::UserStats(
    std::string_view user) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  auto layer = CachedUser(user);
  if (!layer) return std::unexpected(layer.error());
  const auto stats = (*layer)->Stats();
  if (IsEmptyLayer(*stats)) return std::nullopt;
  return model::AlignLayerStats(*stats, *cache_.Stats());
}

std::expected<std::optional<model::LedgerEntry>, Error> RocksdbStore::FindUserLearned(
    std::string_view user, std::string_view id) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return std::nullopt;
  std::string value;
  const rocksdb::Status status =
      database_->db().Get(rocksdb::ReadOptions(), users, UserLedgerKey(user, id), &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return RocksdbError("reading a user's ledger", status);
  auto entry = DecodeLedgerEntry(value);
  if (!entry) return std::unexpected(entry.error());
  return std::move(*entry);
}

std::expected<std::vector<LearnedMessage>, Error> RocksdbStore::ListUserLearned(
    std::string_view user, std::string_view source, std::int64_t since, std::int64_t until,
    std::size_t limit) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::vector<LearnedMessage> found;
  if (since >= until) return found;
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return found;
  rocksdb::DB& db = database_->db();
  rocksdb::ManagedSnapshot snapshot(&db);
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot.snapshot();
  const std::string prefix = UserKindPrefix(user, kUserSourceKind);
  const std::string end = prefix + SourceKeyPrefix(source, until);
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(read_options, users));
  for (it->Seek(prefix + SourceKeyPrefix(source, since)); it->Valid() && found.size() < limit;
       it->Next()) {
    if (it->key().compare(end) >= 0) break;
    const std::string_view key(it->key().data(), it->key().size());
    auto source_key = DecodeSourceKey(key.substr(prefix.size()));
    if (!source_key) return std::unexpected(source_key.error());
    std::string value;
    const rocksdb::Status status =
        db.Get(read_options, users, UserLedgerKey(user, source_key->id), &value);
    if (!status.ok()) return RocksdbError("reading a user's ledger", status);
    auto entry = DecodeLedgerEntry(value);
    if (!entry) return std::unexpected(entry.error());
    found.push_back({std::move(source_key->id), std::move(entry->label), std::move(entry->origin)});
  }
  if (!it->status().ok()) return RocksdbError("reading a user's source index", it->status());
  return found;
}

std::expected<void, Error> RocksdbStore::DeleteUser(std::string_view user,
                                                    std::string_view stream_position) {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::lock_guard write_lock(write_mutex_);
  if (!writable_.load()) return std::unexpected(StoppedError());
  std::shared_lock database_lock(database_mutex_);
  std::shared_ptr<UserLayer> layer = user_cache_.Find(user);
  if (!layer) {
    auto loaded = LoadUser(user);
    if (!loaded) return std::unexpected(loaded.error());
    layer = std::move(*loaded);
  }
  const bool existed = !IsEmptyLayer(*layer->Stats());
  // One range tombstone covers every key of the user: layer, ledger and source index.
  rocksdb::WriteBatch batch;
  if (database_->family(kUsers) != nullptr) {
    batch.DeleteRange(database_->family(kUsers), UserKeyPrefix(user), UserKeyEnd(user));
  }
  if (batch.Count() == 0 && stream_position.empty()) return {};
  if (!stream_position.empty()) {
    batch.Put(database_->family(kMeta), kStreamPositionKey,
              rocksdb::Slice(stream_position.data(), stream_position.size()));
  }
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = database_->db().Write(write_options, &batch);
  if (!status.ok()) {
    if (!FaultOf(status)) return RocksdbError("deleting a user", status);
    return std::unexpected(StopWrites("deleting a user", status));
  }
  user_cache_.Erase(user);
  if (existed) --user_count_;
  if (!stream_position.empty()) {
    std::lock_guard lock(position_mutex_);
    stream_position_ = std::string(stream_position);
  }
  return {};
}

UserLayerFigures RocksdbStore::UserFigures() const {
  const UserLayerCacheFigures cache = user_cache_.Figures();
  return {user_count_.load(), cache.layers, cache.bytes, cache.hits, cache.misses};
}

}  // namespace nbspamd::storage
