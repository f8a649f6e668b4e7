// ResolveDelta: what a Delta does to the current state, computed before anything is written, so
// that a backend can write the whole effect in one atomic batch and then publish it.
#ifndef NBSPAMD_STORAGE_RESOLVED_DELTA_H_
#define NBSPAMD_STORAGE_RESOLVED_DELTA_H_

#include <expected>
#include <utility>
#include <vector>

#include "common/error.h"
#include "model/delta.h"
#include "model/model_stats.h"
#include "storage/count_cache.h"

namespace nbspamd::storage {

// The new full counts of every token the delta touches (empty: the token is gone) and the new
// stats, with each class's token total and |V| kept exact.
struct ResolvedDelta {
  std::vector<std::pair<TokenHash, TokenCounts>> tokens;
  model::ModelStats stats;
};

// Errors: kDataLoss when a count would fall below zero or a class index is unknown, and
// kInternal when a new class already exists. On error the cache is untouched either way.
[[nodiscard]] std::expected<ResolvedDelta, Error> ResolveDelta(const CountCache& cache,
                                                               const model::Delta& delta);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_RESOLVED_DELTA_H_
