// BagBuilder: collects token occurrences in the order they are found and bags them (steps 6
// to 8 of tokenizer/tokenizer.h).
#ifndef NBSPAMD_TOKENIZER_BAG_BUILDER_H_
#define NBSPAMD_TOKENIZER_BAG_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "common/token_bag.h"

namespace nbspamd::tokenizer {

// Keeps the first `max_tokens` occurrences added with Add (AddOutsideBudget's are all kept).
// Occurrences are counted as they come in a hash table, so Finish sorts only the distinct hashes;
// with texts, the text of each hash's first occurrence is kept beside it (all texts back to back
// in one buffer: TokenTexts).
// Not thread-safe; one per Tokenize call.
class BagBuilder {
 public:
  BagBuilder(std::size_t max_tokens, bool keep_text)
      : max_tokens_(max_tokens), keep_text_(keep_text) {
    if (keep_text_) texts_.reserve(256, 4096);  // Most messages' texts fit.
  }

  [[nodiscard]] bool Full() const { return produced_ >= max_tokens_; }

  // Adds one occurrence of the token `text`; returns false (adding nothing) once Full(). The
  // family of a hash is the one given with its first occurrence.
  bool Add(std::string_view text, TokenSource source, TokenFamily family = TokenFamily::kWord);

  // Adds one occurrence of a token already hashed, outside the max_tokens budget: never refused,
  // and Full() does not change (byte n-grams, tokenizer/byte_ngrams.h). With keep_text, on the
  // hash's first occurrence `name()` gives the text that names it (a std::string_view, copied
  // here); otherwise it is not called, so a text costs nothing for the occurrences after the
  // first or without keep_text.
  template <typename Name>
  void AddOutsideBudget(TokenHash hash, TokenSource source, const Name& name) {
    if (Count(hash) && keep_text_) texts_.push_back({name(), source});
  }

  // The bag: each hash once, sorted, with its occurrences (1 with `boolean_counts`). With
  // keep_text, the first text added under a hash names its entry.
  [[nodiscard]] TokenBag Finish(bool boolean_counts) &&;

 private:
  // Counts one occurrence of `hash`; true when it is the hash's first.
  bool Count(TokenHash hash, TokenFamily family = TokenFamily::kWord);
  void Grow();

  std::size_t max_tokens_;
  bool keep_text_;
  std::size_t produced_ = 0;
  // Each distinct hash once with its occurrences, in order of first sight, and a power-of-two
  // open-addressing table (linear probing) of 1 + their index there, 0 for an empty slot. The
  // table is at most half full.
  std::vector<BagEntry> distinct_;
  std::vector<std::uint32_t> slots_;
  TokenTexts texts_;  // When keep_text_: parallel to distinct_.
};

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_BAG_BUILDER_H_
