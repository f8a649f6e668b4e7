// Opening a RocksDB model folder: the schema version check, the upgrades of older schemas in
// place, and the feedback histogram rebuilt from the ledger (rocksdb_layout.h has the layout).
// Called by RocksdbStore::Open before it serves. Plain functions over an open database.
#ifndef NBSPAMD_STORAGE_ROCKSDB_SCHEMA_H_
#define NBSPAMD_STORAGE_ROCKSDB_SCHEMA_H_

#include <rocksdb/db.h>

#include <expected>
#include <string>

#include "common/error.h"
#include "model/calibration.h"
#include "model/model_stats.h"
#include "storage/rocksdb_database.h"

namespace nbspamd::storage {

// Checks the schema version of an existing model (upgrading schemas 1 to 3 in place, each in
// one synced write), or writes the version, empty stats and an empty calibration record for a
// new one. Returns the stored stats. A database opened read-only can be neither initialised nor
// upgraded: kInternal. Errors: kDataLoss for another schema version or corrupt records.
[[nodiscard]] std::expected<model::ModelStats, Error> InitialiseOrCheck(
    const RocksdbDatabase& database, const std::string& path);

// The feedback histogram of the ledger's records, in the current layout: one pass over the
// ledger. Errors: kDataLoss for a corrupt record, kInternal when the read fails.
[[nodiscard]] std::expected<model::FeedbackHistogram, Error> FeedbackFromLedger(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* ledger);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_SCHEMA_H_
