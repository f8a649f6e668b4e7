// The ledger retention's scan of the source indexes: which records a step retires, from where.
// Used by RocksdbStore::RetireLedger and RetireUserLedgers, and by RetireStepStarts to cut a pass
// into steps without retiring anything.
#ifndef NBSPAMD_STORAGE_RETIRE_SCAN_H_
#define NBSPAMD_STORAGE_RETIRE_SCAN_H_

#include <rocksdb/iterator.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "storage/store.h"

namespace nbspamd::storage {

// An entry of the global source index that a step retires.
struct RetireCandidate {
  std::string source_key;
  std::string id;
};

// An entry of a user's source index that a step retires.
struct RetireUserCandidate {
  std::string user;
  std::string source_key;  // The whole users-family key.
  std::string id;
};

// The entries of the global source index (iterated by `it`) learned before `learned_before`,
// source by source and oldest first, from key `from` on: up to `max_records` (0: all) of them into
// `candidates`. The returned step's `more` and `next` say where the step after would start (its
// `retired` stays 0). Errors: kDataLoss for a damaged key; RocksDB's errors.
[[nodiscard]] std::expected<RetireStep, Error> FindRetirable(
    rocksdb::Iterator& it, std::int64_t learned_before, std::size_t max_records,
    std::string_view from, std::vector<RetireCandidate>& candidates);

// The same over the users family (iterated by `it`): the users' source index entries, user by
// user in byte order, then source by source and oldest first; `from` is a users-family key.
[[nodiscard]] std::expected<RetireStep, Error> FindUserRetirable(
    rocksdb::Iterator& it, std::int64_t learned_before, std::size_t max_records,
    std::string_view from, std::vector<RetireUserCandidate>& candidates);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_RETIRE_SCAN_H_
