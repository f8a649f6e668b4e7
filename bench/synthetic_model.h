// SyntheticModel: two-class models of any size, and messages whose tokens hit them, for the
// storage and scale benchmarks. Everything is derived from token indices, so a model written
// once can be measured later without keeping its token list.
#ifndef NBSPAMD_BENCH_SYNTHETIC_MODEL_H_
#define NBSPAMD_BENCH_SYNTHETIC_MODEL_H_

#include <cstdint>
#include <expected>
#include <random>
#include <string>

#include "common/error.h"
#include "common/token_bag.h"
#include "model/delta.h"
#include "storage/count_cache.h"
#include "storage/store.h"

namespace nbspamd::bench {

// The hash of synthetic token `index` (a bijection, so distinct indices give distinct tokens).
[[nodiscard]] TokenHash SyntheticToken(std::uint64_t index);

// The spam and ham counts of synthetic token `index`: small and skewed like real counts (most
// tokens seen a few times, in one class or both); never both zero.
[[nodiscard]] storage::TokenCounts SyntheticCounts(std::uint64_t index);

// Adds tokens [first, last) with their SyntheticCounts and `documents` documents per class to a
// model with the default classes, as one delta.
[[nodiscard]] model::Delta SyntheticTokensDelta(std::uint64_t first, std::uint64_t last,
                                                std::int64_t documents);

// Writes a model of `tokens` tokens through `store`, in deltas of at most `batch` tokens.
[[nodiscard]] std::expected<void, Error> WriteSyntheticModel(storage::Store& store,
                                                             std::uint64_t tokens,
                                                             std::uint64_t batch = 100000);

// Fills `cache` (default classes) with a model of `tokens` tokens without any store.
void LoadSyntheticModel(storage::CountCache& cache, std::uint64_t tokens);

// A message of `size` distinct tokens drawn uniformly from a model of `tokens` tokens (the
// worst case for caches: no token is hotter than another), each counted 1 to 3 times.
[[nodiscard]] TokenBag SyntheticMessage(std::mt19937_64& random, std::uint64_t tokens,
                                        std::size_t size = 200);

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_SYNTHETIC_MODEL_H_
