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

// Which kind of evidence a token is, for a score that gives each kind its share
// (model::ClassifyOptions::char_ngram_share). The values are stored (the scan history keeps them
// with its bags): append new ones, never renumber.
enum class TokenFamily : std::uint8_t {
  kWord,       // Words, header values, URL hosts, facts and byte n-grams: everything else.
  kCharNgram,  // A word's character n-gram (tokenizer::TokenizerOptions::word_char_ngrams).
};
// The last TokenFamily value, for readers of stored ones.
inline constexpr TokenFamily kLastTokenFamily = TokenFamily::kCharNgram;

// One distinct token of a message and how many times it occurs there (1 with boolean counts).
// The family rides in what would be padding: an entry is 16 bytes either way.
struct BagEntry {
  TokenHash hash = 0;
  std::uint32_t count = 0;
  TokenFamily family = TokenFamily::kWord;

  friend bool operator==(const BagEntry&, const BagEntry&) = default;
};
static_assert(sizeof(BagEntry) == 16);

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
