// WordScanner: the words of UTF-8 text (steps 3 to 5 of tokenizer/tokenizer.h), added to a
// BagBuilder as `prefix + word` tokens (and bigrams when asked).
//
// Two paths find the same words. WordPath::kIcuOnly runs ICU on everything: NFKC_Casefold, the
// root word break iterator and the word filter. WordPath::kAsciiFast (the default) cuts each
// chunk further into runs at places where ICU can see no difference (ASCII whitespace followed
// by an ASCII character: a normalisation and a word boundary) and gives the runs that are pure
// ASCII to tokenizer/ascii_words.h; runs holding any other byte go to ICU as before.
#ifndef NBSPAMD_TOKENIZER_WORD_SCANNER_H_
#define NBSPAMD_TOKENIZER_WORD_SCANNER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/token_bag.h"
#include "tokenizer/bag_builder.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::tokenizer {

struct ThreadIcuState;  // This thread's normaliser and word break iterator.

// Not thread-safe: one per Tokenize call (it uses the calling thread's ICU state).
class WordScanner {
 public:
  explicit WordScanner(const TokenizerOptions& options);

  // Adds `prefix + word` for each word of `text` (valid or invalid UTF-8) until `bag` is full.
  void Scan(std::string_view text, std::string_view prefix, TokenSource source, BagBuilder& bag);

 private:
  void ScanChunk(std::string_view chunk, TokenSource source, BagBuilder& bag);
  void ScanWithIcu(std::string_view text, TokenSource source, BagBuilder& bag);
  void ScanAscii(std::string_view text, TokenSource source, BagBuilder& bag);
  // Adds token_ (and its pairs with the words before it, and its character n-grams, when asked);
  // false once the bag is full.
  bool AddWord(TokenSource source, BagBuilder& bag);
  bool AddPairs(std::string_view word, TokenSource source, BagBuilder& bag);
  bool AddCharNgrams(std::string_view word, TokenSource source, BagBuilder& bag);
  bool SetIcuWord(const char16_t* chars, std::int32_t start, std::int32_t end);

  std::size_t min_chars_;
  std::size_t max_chars_;
  static constexpr std::size_t kMaxPairWindow = 5;
  std::size_t pair_window_;  // 0 (no pairs), or 2..kMaxPairWindow: word_bigrams is 2.
  std::size_t char_ngrams_;  // 0 (none), or the n of the words' character n-grams.
  bool ascii_fast_;
  bool fold_lookalikes_;
  ThreadIcuState& icu_;
  // The last pair_window_ - 1 words of this text, without prefix, most recent at
  // (next_earlier_ + kMaxPairWindow - 2) % (kMaxPairWindow - 1); earlier_count_ of them are set.
  std::array<std::string, kMaxPairWindow - 1> earlier_;
  std::size_t next_earlier_ = 0;
  std::size_t earlier_count_ = 0;
  std::string pair_;                 // The pair or n-gram token being built; reused.
  std::vector<std::size_t> starts_;  // Byte offsets of a word's code points; reused.
  std::string token_;                // The token being built: prefix then word; reused.
  std::size_t prefix_size_ = 0;
};

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_WORD_SCANNER_H_
