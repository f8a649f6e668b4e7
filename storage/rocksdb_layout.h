// The names the RocksDB store gives its column families and meta records (docs/STORAGE.md).
// Do not change: stored on disk.
#ifndef NBSPAMD_STORAGE_ROCKSDB_LAYOUT_H_
#define NBSPAMD_STORAGE_ROCKSDB_LAYOUT_H_

namespace nbspamd::storage {

inline constexpr char kTokensFamily[] = "tokens";  // Token key → per-class counts.
inline constexpr char kLedgerFamily[] = "ledger";  // Message id → LedgerEntry.
// Source index (schema 2): EncodeSourceKey(id, origin) → "", one per ledger record.
inline constexpr char kSourcesFamily[] = "sources";
// User layers (docs/STORAGE.md): keys of storage/encoding.h's User*Key, by user first.
inline constexpr char kUsersFamily[] = "users";
// Base counts (schema 4): token key → the per-class counts of that token that no ledger record
// accounts for (restored or merged from a dump, docs/STORAGE.md "Base counts"). Created by the
// first restore; a folder without it has none.
inline constexpr char kBaseFamily[] = "base";
// Last seen (schema 5): token key → varint learned_at (Unix seconds) of the newest retired
// ledger record that held the token: the age the token expiry reads (docs/STORAGE.md "Token
// expiry"). Created by the first retirement; a base token without a record counts as old.
inline constexpr char kSeenFamily[] = "seen";
// Meta records, in the default column family.
inline constexpr char kSchemaVersionKey[] = "schema_version";
inline constexpr char kModelStatsKey[] = "model_stats";
inline constexpr char kStreamPositionKey[] = "stream_position";
// Schema 3: the feedback histogram of held-out scores (EncodeFeedbackHistogram).
inline constexpr char kCalibrationKey[] = "calibration";
// Schema 4: the documents per class that no ledger record accounts for (EncodeDocumentCounts);
// absent: none.
inline constexpr char kBaseDocumentsKey[] = "base_documents";

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_LAYOUT_H_
