// The records one training write puts and deletes, as a pure function of what DeltaResolver
// decided: RocksdbStore::ApplyBatch hands them to a rocksdb::WriteBatch, the tests to a list.
//
//   struct Sink {
//     void Put(FamilyIndex family, std::string_view key, std::string_view value);
//     void Delete(FamilyIndex family, std::string_view key);
//   };
//   const std::string* position = EncodeTrainingBatch(resolved, deltas, results, sink);
//
// In this order: the final counts of each token (deleted when nothing is left); per changed user
// layer its token counts and stats (deleted when empty); the ledger and source-index records of
// each accepted delta, in the order of the deltas, so that a later record of the same id replaces
// an earlier one; the model stats; the calibration record when the feedback changed; the stream
// position of the last delta that has one. Thread-safe as far as its arguments are.
#ifndef NBSPAMD_STORAGE_TRAINING_BATCH_H_
#define NBSPAMD_STORAGE_TRAINING_BATCH_H_

#include <span>
#include <string>

#include "model/delta.h"
#include "storage/encoding.h"
#include "storage/resolved_delta.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/store.h"
#include "storage/user_layer_cache.h"

namespace nbspamd::storage {

// Returns the stream position the batch records (into `deltas`), or nullptr when none has one.
// REQUIRES: results.size() == deltas.size(); `resolved` is what the accepted deltas (those whose
// result has a value) resolved to.
template <class Sink>
const std::string* EncodeTrainingBatch(const ResolvedDelta& resolved,
                                       std::span<const model::Delta> deltas,
                                       const BatchResults& results, Sink& sink) {
  for (const auto& [hash, counts] : resolved.tokens) {
    const std::string key = EncodeTokenKey(hash);
    if (counts.empty()) {
      sink.Delete(kTokens, key);
    } else {
      sink.Put(kTokens, key, EncodeTokenCounts(counts));
    }
  }
  for (const ResolvedUser& user : resolved.users) {
    for (const auto& [hash, counts] : user.tokens) {
      const std::string key = UserTokenKey(user.user, hash);
      if (counts.empty()) {
        sink.Delete(kUsers, key);
      } else {
        sink.Put(kUsers, key, EncodeTokenCounts(counts));
      }
    }
    if (IsEmptyLayer(user.stats)) {
      sink.Delete(kUsers, UserStatsKey(user.user));
    } else {
      sink.Put(kUsers, UserStatsKey(user.user), EncodeModelStats(user.stats));
    }
  }
  const std::string* stream_position = nullptr;
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (!results[i]) continue;
    const model::Delta& delta = deltas[i];
    if (delta.user) {
      const model::UserLayerChange& change = *delta.user;
      if (change.replaced_origin) {
        sink.Delete(kUsers, UserSourceKey(change.user, change.ledger_id, *change.replaced_origin));
      }
      if (change.ledger_entry) {
        sink.Put(kUsers, UserLedgerKey(change.user, change.ledger_id),
                 EncodeLedgerEntry(*change.ledger_entry));
        sink.Put(kUsers, UserSourceKey(change.user, change.ledger_id, change.ledger_entry->origin),
                 "");
      } else if (!change.ledger_id.empty()) {
        sink.Delete(kUsers, UserLedgerKey(change.user, change.ledger_id));
      }
    }
    if (delta.replaced_origin) {
      sink.Delete(kSources, EncodeSourceKey(delta.ledger_id, *delta.replaced_origin));
    }
    if (delta.ledger_entry) {
      sink.Put(kLedger, delta.ledger_id, EncodeLedgerEntry(*delta.ledger_entry));
      sink.Put(kSources, EncodeSourceKey(delta.ledger_id, delta.ledger_entry->origin), "");
    } else if (!delta.ledger_id.empty()) {
      sink.Delete(kLedger, delta.ledger_id);
    }
    if (!delta.stream_position.empty()) stream_position = &delta.stream_position;
  }
  sink.Put(kMeta, kModelStatsKey, EncodeModelStats(resolved.stats));
  if (resolved.feedback)
    sink.Put(kMeta, kCalibrationKey, EncodeFeedbackHistogram(*resolved.feedback));
  if (stream_position != nullptr) sink.Put(kMeta, kStreamPositionKey, *stream_position);
  return stream_position;
}

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_TRAINING_BATCH_H_
