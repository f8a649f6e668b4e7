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

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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
  // Adds token_ (and the bigram with the previous word); false once the bag is full.
  bool AddWord(TokenSource source, BagBuilder& bag);
  bool SetIcuWord(const char16_t* chars, std::int32_t start, std::int32_t end);

  std::size_t min_chars_;
  std::size_t max_chars_;
  bool bigrams_;
  bool ascii_fast_;
  ThreadIcuState& icu_;
  std::string previous_;  // The previous word of this text (for bigrams), without prefix.
  std::string bigram_;    // The bigram token being built; reused.
  std::string token_;     // The token being built: prefix then word; reused.
  std::size_t prefix_size_ = 0;
};

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_WORD_SCANNER_H_
