// The on-disk encodings of the RocksDB store. Do not change: stored on disk. A change of any of
// them needs a new kSchemaVersion (docs/STORAGE.md describes the format).
//
// Integers are LevelDB-style varints (7 bits a byte, low bits first); token keys are the 64-bit
// token hash as 8 bytes big-endian, so keys sort by hash.
#ifndef NBSPAMD_STORAGE_ENCODING_H_
#define NBSPAMD_STORAGE_ENCODING_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "model/calibration.h"
#include "model/delta.h"
#include "model/model_stats.h"
#include "storage/count_cache.h"

namespace nbspamd::storage {

// Do not change: stored on disk. Bumped whenever any encoding below changes.
// 3: ledger records may end with a held-out score; the calibration meta record.
// 4: base counts (the `base` family, the base_documents record, users' kinds 'b' and 'd').
// 5: retired ledger records (a last byte 2; the ledger retention).
// 6: the ledger retention and token expiry of user layers: retired user ledger records and the
//    users' last-seen records (kind 'e').
// 7: checked-only ledger records (a byte 3 before the retired mark; error-driven training).
inline constexpr std::uint64_t kSchemaVersion = 7;

void PutVarint64(std::string& out, std::uint64_t value);

// Fixed-width little-endian integers into and out of raw bytes (LevelDB's EncodeFixed32 and
// DecodeFixed32), for layouts that write many at once. REQUIRES: 4 or 8 bytes at the pointer.
inline void EncodeFixed32(char* out, std::uint32_t value) {
  if constexpr (std::endian::native != std::endian::little) value = std::byteswap(value);
  std::memcpy(out, &value, sizeof value);
}
inline void EncodeFixed64(char* out, std::uint64_t value) {
  if constexpr (std::endian::native != std::endian::little) value = std::byteswap(value);
  std::memcpy(out, &value, sizeof value);
}
[[nodiscard]] inline std::uint32_t DecodeFixed32(const char* in) {
  std::uint32_t value = 0;
  std::memcpy(&value, in, sizeof value);
  if constexpr (std::endian::native != std::endian::little) value = std::byteswap(value);
  return value;
}
[[nodiscard]] inline std::uint64_t DecodeFixed64(const char* in) {
  std::uint64_t value = 0;
  std::memcpy(&value, in, sizeof value);
  if constexpr (std::endian::native != std::endian::little) value = std::byteswap(value);
  return value;
}
// Reads a varint from the front of `input` and advances it. False when truncated or too long.
[[nodiscard]] bool GetVarint64(std::string_view& input, std::uint64_t& value);

// The families of a bag's entries (TokenFamily), for the formats that keep bags beside the store
// (the scan history's details, the cluster stream's learns): a varint count of the entries that
// are not TokenFamily::kWord, then, when it is not 0, a bitmap of ceil(n / 8) bytes, bit i
// (bit i % 8 of byte i / 8) set when entry i is a TokenFamily::kCharNgram. A bag of words alone
// is one byte, 0.
void PutBagFamilies(std::string& out, std::span<const BagEntry> bag);
// Reads what PutBagFamilies wrote for a bag of bag.size() entries from the front of `input` and
// sets their families; false (input and bag then unspecified) when truncated or malformed: a
// count above the bag's size or unlike the bitmap's, or a bit set past the last entry.
[[nodiscard]] bool GetBagFamilies(std::string_view& input, std::span<BagEntry> bag);

// Token key: 8 bytes, big-endian hash.
[[nodiscard]] std::string EncodeTokenKey(TokenHash hash);
[[nodiscard]] std::expected<TokenHash, Error> DecodeTokenKey(std::string_view key);

// Token value: varint class count, then one varint count per class.
[[nodiscard]] std::string EncodeTokenCounts(const TokenCounts& counts);
[[nodiscard]] std::expected<TokenCounts, Error> DecodeTokenCounts(std::string_view value);
// The same into `counts`, reusing its memory (for loading millions of records).
[[nodiscard]] std::expected<void, Error> DecodeTokenCountsInto(std::string_view value,
                                                               TokenCounts& counts);

// Stats: varint class count; per class varint label length, label bytes, varint documents,
// varint tokens; then varint |V|.
[[nodiscard]] std::string EncodeModelStats(const model::ModelStats& stats);
[[nodiscard]] std::expected<model::ModelStats, Error> DecodeModelStats(std::string_view value);

// Documents per class (base_documents, schema 4): varint class count, then a varint per class.
[[nodiscard]] std::string EncodeDocumentCounts(const std::vector<std::uint64_t>& documents);
[[nodiscard]] std::expected<std::vector<std::uint64_t>, Error> DecodeDocumentCounts(
    std::string_view value);

// Last-seen value (family `seen`, schema 5): varint learned_at (Unix seconds, never negative).
[[nodiscard]] std::string EncodeLastSeen(std::int64_t learned_at);
[[nodiscard]] std::expected<std::int64_t, Error> DecodeLastSeen(std::string_view value);

// Ledger value: varint label length, label bytes, varint token count, then per token 8 bytes
// big-endian hash and a varint count; then (since schema 2) varint source length, source bytes
// and varint learned_at; then (since schema 3, only when the record has one) the held-out score:
// a byte 1, varint scale and the score's IEEE 754 bits as 8 bytes big-endian. A schema 1 record
// ends after the tokens: its origin is {"", 0}; a record that ends after learned_at has no
// held-out score. Then (since schema 7, only for a checked record, which has no tokens) a byte 3.
// Last (since schema 5, only for a retired record, which has no tokens) a byte 2.
[[nodiscard]] std::string EncodeLedgerEntry(const model::LedgerEntry& entry);
[[nodiscard]] std::expected<model::LedgerEntry, Error> DecodeLedgerEntry(std::string_view value);

// Calibration record (schema 3): the feedback histogram (model/calibration.h): varint
// score_scale, varint bins, low and high as IEEE 754 bits in 8 bytes big-endian each, then per
// bin a varint spam count and a varint ham count. Decoding accepts any layout (the caller
// compares it with the current one).
[[nodiscard]] std::string EncodeFeedbackHistogram(const model::FeedbackHistogram& histogram);
[[nodiscard]] std::expected<model::FeedbackHistogram, Error> DecodeFeedbackHistogram(
    std::string_view value);

// Source index key (schema 2): source bytes, a 0 byte, learned_at as 8 bytes big-endian, then the
// message id; the value is empty. One per ledger record, so keys sort by source, then time.
[[nodiscard]] std::string EncodeSourceKey(std::string_view id, const model::LearnOrigin& origin);
// The key where `source`'s records learned at `learned_at` or later begin.
[[nodiscard]] std::string SourceKeyPrefix(std::string_view source, std::int64_t learned_at);
struct SourceKey {
  std::string source;
  std::int64_t learned_at = 0;
  std::string id;
};
[[nodiscard]] std::expected<SourceKey, Error> DecodeSourceKey(std::string_view key);

// User layer keys (family `users`, docs/STORAGE.md): the user id, a 0 byte, a kind byte, then
// the kind's key. All of one user's keys lie in [UserKeyPrefix(user), UserKeyEnd(user)).
inline constexpr char kUserStatsKind = 's';   // → EncodeModelStats of the layer.
inline constexpr char kUserTokenKind = 't';   // + EncodeTokenKey → EncodeTokenCounts.
inline constexpr char kUserLedgerKind = 'l';  // + message id → EncodeLedgerEntry.
inline constexpr char kUserSourceKind = 'o';  // + EncodeSourceKey → "".
// Schema 4: the user's base counts, as the global ones (rocksdb_layout.h's kBaseFamily).
inline constexpr char kUserBaseKind = 'b';           // + EncodeTokenKey → EncodeTokenCounts.
inline constexpr char kUserBaseDocumentsKind = 'd';  // → EncodeDocumentCounts.
// Schema 6: the user's last-seen times, as the global `seen` family (rocksdb_layout.h's
// kSeenFamily): written when a user ledger record is retired, read by the token expiry.
inline constexpr char kUserSeenKind = 'e';  // + EncodeTokenKey → EncodeLastSeen.

// user, 0.
[[nodiscard]] std::string UserKeyPrefix(std::string_view user);
// user, 1: the first key after all of user's.
[[nodiscard]] std::string UserKeyEnd(std::string_view user);
// user, 0, kind: where the user's keys of that kind begin.
[[nodiscard]] std::string UserKindPrefix(std::string_view user, char kind);
[[nodiscard]] std::string UserStatsKey(std::string_view user);
[[nodiscard]] std::string UserTokenKey(std::string_view user, TokenHash hash);
[[nodiscard]] std::string UserLedgerKey(std::string_view user, std::string_view id);
[[nodiscard]] std::string UserBaseKey(std::string_view user, TokenHash hash);
[[nodiscard]] std::string UserBaseDocumentsKey(std::string_view user);
[[nodiscard]] std::string UserSeenKey(std::string_view user, TokenHash hash);
[[nodiscard]] std::string UserSourceKey(std::string_view user, std::string_view id,
                                        const model::LearnOrigin& origin);

// A users-family key taken apart: `rest` is what follows the kind byte (a view into the key).
struct UserKey {
  std::string_view user;
  char kind = 0;
  std::string_view rest;
};
[[nodiscard]] std::expected<UserKey, Error> DecodeUserKey(std::string_view key);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ENCODING_H_
