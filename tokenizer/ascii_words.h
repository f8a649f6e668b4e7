// ForEachAsciiWord: the words of pure ASCII text, found without ICU.
//
// It finds exactly the segments that ICU NFKC_Casefold normalisation followed by the ICU
// root-locale word break iterator (ICU 72 rules) and the word filter of tokenizer/tokenizer.h
// (rule status of a number or letter word, holding a letter or digit) keep, for text that is all
// ASCII. On ASCII, NFKC_Casefold only lower-cases A-Z, one byte for one byte, so a word's
// normalised form is its bytes lower-cased and its length in code points is its length in bytes.
// The differential test (tokenizer/word_paths_test.cc) and the fuzz target
// (tokenizer/fuzz/word_paths_fuzzer.cc) hold this against ICU itself.
//
// Word_Break classes of ASCII as ICU 72's root rules use them:
//   letters  A-Z a-z and '@' (ICU 72 keeps e-mail addresses whole: '@' joins like a letter)
//   digits   0-9
//   '_'      ExtendNumLet: joins letters, digits and itself
//   '.' '\'' MidNumLet / Single_Quote: join letter.letter and digit.digit
//   ',' ';'  MidNum: join digit,digit only
//   ':'      not joining (ICU 72 removed it from MidLetter in the root rules)
//   the rest break on both sides (CR LF and runs of spaces form non-word segments).
// A run of letters, digits and '_' with such joins is one segment whose rule status is a word
// status; any other segment is not a word.
#ifndef NBSPAMD_TOKENIZER_ASCII_WORDS_H_
#define NBSPAMD_TOKENIZER_ASCII_WORDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nbspamd::tokenizer {

namespace ascii_words_internal {

enum WordClass : std::uint8_t {
  kOther = 0,
  kLetter = 1,       // ALetter (and '@').
  kDigit = 2,        // Numeric.
  kConnector = 3,    // ExtendNumLet '_'.
  kMidNumLet = 4,    // '.' and '\'': between two letters or two digits.
  kMidNum = 5,       // ',' and ';': between two digits.
  kAlnumFlag = 0x8,  // Added to letters and digits that u_isalnum accepts (not '@').
};

constexpr std::array<std::uint8_t, 256> MakeClassTable() {
  std::array<std::uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[c] = kLetter | kAlnumFlag;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = kLetter | kAlnumFlag;
  for (int c = '0'; c <= '9'; ++c) table[c] = kDigit | kAlnumFlag;
  table['@'] = kLetter;
  table['_'] = kConnector;
  table['.'] = kMidNumLet;
  table['\''] = kMidNumLet;
  table[','] = kMidNum;
  table[';'] = kMidNum;
  return table;
}

inline constexpr std::array<std::uint8_t, 256> kClassTable = MakeClassTable();

inline std::uint8_t ClassOf(char c) { return kClassTable[static_cast<unsigned char>(c)] & 0x7; }

inline bool IsWordChar(std::uint8_t word_class) {
  return word_class >= kLetter && word_class <= kConnector;
}

}  // namespace ascii_words_internal

// Calls on_word(segment) for each word of `text`, in order, where segment is the word's bytes in
// `text` (not yet lower-cased). REQUIRES: every byte of `text` is below 0x80. Length bounds are
// left to the caller. on_word returns false to stop early.
template <typename OnWord>
void ForEachAsciiWord(std::string_view text, OnWord&& on_word) {
  using namespace ascii_words_internal;
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    // Skip to the start of the next run of letters, digits and '_'.
    while (i < size && !IsWordChar(ClassOf(text[i]))) ++i;
    if (i == size) return;
    const std::size_t start = i;
    std::uint8_t alnum = kClassTable[static_cast<unsigned char>(text[i])] & kAlnumFlag;
    std::uint8_t previous = ClassOf(text[i]);
    ++i;
    while (i < size) {
      const std::uint8_t entry = kClassTable[static_cast<unsigned char>(text[i])];
      const std::uint8_t current = entry & 0x7;
      if (IsWordChar(current)) {
        alnum |= entry & kAlnumFlag;
        previous = current;
        ++i;
        continue;
      }
      // A joining mark needs the same kind (letter or digit) on both sides.
      if ((current != kMidNumLet && current != kMidNum) || i + 1 == size) break;
      const std::uint8_t after_entry = kClassTable[static_cast<unsigned char>(text[i + 1])];
      const std::uint8_t after = after_entry & 0x7;
      const bool joins = (previous == kDigit && after == kDigit) ||
                         (current == kMidNumLet && previous == kLetter && after == kLetter);
      if (!joins) break;
      alnum |= after_entry & kAlnumFlag;
      previous = after;
      i += 2;
    }
    if (alnum != 0 && !on_word(text.substr(start, i - start))) return;
  }
}

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_ASCII_WORDS_H_
