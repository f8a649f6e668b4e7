#include "storage/rocksdb_schema.h"

#include <rocksdb/write_batch.h>

#include <charconv>
#include <memory>
#include <string_view>
#include <vector>

#include "storage/encoding.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"

namespace nbspamd::storage {
namespace {

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

// Schema 3 → 4: a schema 3 folder has no base counts (neither the family nor the records), which
// schema 4 reads as none. Records learned through the source `autolearn` (a bearer token of that
// name, before the daemon reserved it for its own learns) no longer calibrate, so the calibration
// record is counted again from the ledger; it and the version record are one synced write.
std::expected<void, Error> UpgradeFromSchema3(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  auto feedback = FeedbackFromLedger(db, handles[kLedger]);
  if (!feedback) return std::unexpected(feedback.error());
  rocksdb::WriteBatch batch;
  batch.Put(handles[kMeta], kCalibrationKey, EncodeFeedbackHistogram(*feedback));
  batch.Put(handles[kMeta], kSchemaVersionKey, "4");
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db.Write(write_options, &batch);
  if (!status.ok()) return RocksdbError("upgrading " + path, status);
  return {};
}

// Schema 4 → 5: schema 5 adds retired ledger records (the ledger retention), which no schema 4
// folder has; only the version record changes.
std::expected<void, Error> UpgradeFromSchema4(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db.Put(write_options, handles[kMeta], kSchemaVersionKey, "5");
  if (!status.ok()) return RocksdbError("upgrading " + path, status);
  return {};
}

// Schema 5 → 6: schema 6 adds retired user ledger records and the users' last-seen records (the
// model expiry of user layers), which no schema 5 folder has; only the version record changes.
std::expected<void, Error> UpgradeFromSchema5(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db.Put(write_options, handles[kMeta], kSchemaVersionKey, "6");
  if (!status.ok()) return RocksdbError("upgrading " + path, status);
  return {};
}

// Schema 6 → 7: schema 7 adds checked-only ledger records (error-driven training), which no
// schema 6 folder has; only the version record changes.
std::expected<void, Error> UpgradeFromSchema6(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
    const std::string& path) {
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = db.Put(write_options, handles[kMeta], kSchemaVersionKey, "7");
  if (!status.ok()) return RocksdbError("upgrading " + path, status);
  return {};
}

}  // namespace

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
  if (stored >= 1 && stored <= 6) {
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
  if (stored == 3) {
    if (auto upgraded = UpgradeFromSchema3(db, handles, path); !upgraded) {
      return std::unexpected(upgraded.error());
    }
    stored = 4;
  }
  if (stored == 4) {
    if (auto upgraded = UpgradeFromSchema4(db, handles, path); !upgraded) {
      return std::unexpected(upgraded.error());
    }
    stored = 5;
  }
  if (stored == 5) {
    if (auto upgraded = UpgradeFromSchema5(db, handles, path); !upgraded) {
      return std::unexpected(upgraded.error());
    }
    stored = 6;
  }
  if (stored == 6) {
    if (auto upgraded = UpgradeFromSchema6(db, handles, path); !upgraded) {
      return std::unexpected(upgraded.error());
    }
    stored = 7;
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

}  // namespace nbspamd::storage
