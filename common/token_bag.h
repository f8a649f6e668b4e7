// TokenBag: a message as a bag of tokens, the tokenizer's output and the model's input.
//
// Tokens are keyed by TokenHash, a stable 64-bit hash of the token's full text (see
// common/token_hash.h: it is part of the on-disk format). The text is kept only when an
// explanation of a verdict is asked for.
#ifndef NBSPAMD_COMMON_TOKEN_BAG_H_
#define NBSPAMD_COMMON_TOKEN_BAG_H_

#include <cstdint>
#include <vector>

#include "common/token_texts.h"

namespace nbspamd {

using TokenHash = std::uint64_t;

// One distinct token of a message and how many times it occurs there (1 with boolean counts).
struct BagEntry {
  TokenHash hash = 0;
  std::uint32_t count = 0;

  friend bool operator==(const BagEntry&, const BagEntry&) = default;
};

// Invariant: `entries` is sorted by hash and holds each hash once with count >= 1. `texts` is
// either empty or parallel to `entries` (texts[i] names entries[i]).
struct TokenBag {
  std::vector<BagEntry> entries;
  TokenTexts texts;

  // Sum of the counts of all entries.
  [[nodiscard]] std::uint64_t TotalCount() const {
    std::uint64_t total = 0;
    for (const BagEntry& entry : entries) total += entry.count;
    return total;
  }
};

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_TOKEN_BAG_H_
