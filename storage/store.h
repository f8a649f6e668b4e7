// Store: where the model's counts live, behind one small interface so that backends can be
// swapped without touching model or server. Two implement it: RocksdbStore (the embedded,
// durable default) and MemoryStore (tests, throw-away models).
//
//   model::Snapshot snapshot = store.Read(bag.entries);        // any thread, never blocks
//   std::expected<void, Error> done = store.Apply(delta);      // one writer at a time
#ifndef NBSPAMD_STORAGE_STORE_H_
#define NBSPAMD_STORAGE_STORE_H_

#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "common/error.h"
#include "model/delta.h"
#include "model/model_stats.h"
#include "model/snapshot.h"
#include "tokenizer/token_bag.h"

namespace nbspamd::storage {

// Thread safety: Read, Stats and FindLearned may be called from any number of threads at once,
// also while Apply runs; they never wait for Apply. Apply calls must be serialised by the caller
// (training goes through one writer, so |V| and the totals stay exact).
class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store() = default;

  // The stats and the per-class counts of `entries`' tokens, all from one model state: the
  // state before or after any Apply, never in between. Reads memory only.
  [[nodiscard]] virtual model::Snapshot Read(std::span<const BagEntry> entries) const = 0;

  // The current stats.
  [[nodiscard]] virtual std::shared_ptr<const model::ModelStats> Stats() const = 0;

  // What the training ledger holds for message `id`: nullopt when it was never learned.
  // Errors: kDataLoss for a corrupt record, kInternal for an I/O failure.
  [[nodiscard]] virtual std::expected<std::optional<model::LedgerEntry>, Error> FindLearned(
      std::string_view id) const = 0;

  // Applies `delta` atomically: all of it or none of it. When it returns success the change is
  // durable (for RocksdbStore: in the synced write-ahead log) and visible to Read.
  // Errors: kDataLoss when the delta would drive a count below zero or names an unknown class
  // (nothing is applied), kInternal for an I/O failure (nothing is applied).
  [[nodiscard]] virtual std::expected<void, Error> Apply(const model::Delta& delta) = 0;

  // The replication position stored by the last Apply that carried one ("" if none).
  [[nodiscard]] virtual std::string StreamPosition() const = 0;
};

// The classes a new, empty model starts with.
inline constexpr std::string_view kDefaultLabels[] = {"spam", "ham"};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_STORE_H_
