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
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

namespace ascii_words_internal {

// ForEachAsciiWord byte by byte: the definition the 64-byte version is held to (AsciiWordsTest),
// and the version where the CPU has no SSE2.
template <typename OnWord>
void ForEachAsciiWordByByte(std::string_view text, OnWord&& on_word) {
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

#if defined(__SSE2__)

// The classes of 64 bytes, one bit a byte (bit i for byte i).
struct ClassBits {
  std::uint64_t letter = 0;       // kLetter: A-Z, a-z, '@'.
  std::uint64_t digit = 0;        // kDigit.
  std::uint64_t word = 0;         // kLetter, kDigit or kConnector.
  std::uint64_t mid_num_let = 0;  // '.' and '\''.
  std::uint64_t mid_num = 0;      // ',' and ';'.
  std::uint64_t alnum = 0;        // kAlnumFlag: letters and digits but '@'.
};

// ClassBits of the 64 bytes at `bytes`, which must all be readable. Bytes of 0x80 and above
// (which ForEachAsciiWord is never given) are in no class, as in kClassTable.
inline ClassBits ClassBitsOf(const char* bytes) {
  ClassBits bits;
  const __m128i before_a = _mm_set1_epi8('a' - 1);
  const __m128i after_z = _mm_set1_epi8('z' + 1);
  const __m128i before_0 = _mm_set1_epi8('0' - 1);
  const __m128i after_9 = _mm_set1_epi8('9' + 1);
  const __m128i case_bit = _mm_set1_epi8(0x20);
  for (int chunk = 0; chunk < 4; ++chunk) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * chunk));
    // Signed compares: bytes of 0x80 and above are negative, so in no range.
    const __m128i lower = _mm_or_si128(x, case_bit);
    const __m128i letter =
        _mm_and_si128(_mm_cmpgt_epi8(lower, before_a), _mm_cmplt_epi8(lower, after_z));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, before_0), _mm_cmplt_epi8(x, after_9));
    const __m128i at = _mm_cmpeq_epi8(x, _mm_set1_epi8('@'));
    const __m128i underscore = _mm_cmpeq_epi8(x, _mm_set1_epi8('_'));
    const __m128i mid_num_let =
        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('.')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\'')));
    const __m128i mid_num =
        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(',')), _mm_cmpeq_epi8(x, _mm_set1_epi8(';')));
    const __m128i alnum = _mm_or_si128(letter, digit);
    const auto bits_of = [&](__m128i mask) {
      return static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(mask)))
             << (16 * chunk);
    };
    bits.letter |= bits_of(_mm_or_si128(letter, at));
    bits.digit |= bits_of(digit);
    bits.word |= bits_of(_mm_or_si128(_mm_or_si128(alnum, at), underscore));
    bits.mid_num_let |= bits_of(mid_num_let);
    bits.mid_num |= bits_of(mid_num);
    bits.alnum |= bits_of(alnum);
  }
  return bits;
}

#endif  // __SSE2__

}  // namespace ascii_words_internal

// Calls on_word(segment) for each word of `text`, in order, where segment is the word's bytes in
// `text` (not yet lower-cased). REQUIRES: every byte of `text` is below 0x80. Length bounds are
// left to the caller. on_word returns false to stop early.
//
// 64 bytes at a time where the CPU has SSE2: each byte's class as a bit (ClassBitsOf), a joining
// mark's bit set where the bytes on both sides allow the join (the byte before a mark in a word is
// always the word's previous character, so the rule needs no state), and the words are the runs
// of word and joining bits; a run is a word when it holds a letter or digit. The same words as
// ForEachAsciiWordByByte (AsciiWordsTest compares them on random text).
template <typename OnWord>
void ForEachAsciiWord(std::string_view text, OnWord&& on_word) {
  using namespace ascii_words_internal;
#if defined(__SSE2__)
  const std::size_t size = text.size();
  bool in_word = false;  // A word runs on from the block before.
  bool word_alnum = false;
  std::size_t word_start = 0;
  std::uint64_t letter_before = 0;  // Bit 0: the byte before the block is a letter.
  std::uint64_t digit_before = 0;
  for (std::size_t base = 0; base < size; base += 64) {
    ClassBits bits;
    if (size - base >= 64) {
      bits = ClassBitsOf(text.data() + base);
    } else {
      char tail[64] = {};  // NUL is in no class.
      std::memcpy(tail, text.data() + base, size - base);
      bits = ClassBitsOf(tail);
    }
    // The byte after the block, for a join at its last byte (none after the text's end).
    std::uint64_t letter_after = 0;
    std::uint64_t digit_after = 0;
    if (base + 64 < size) {
      const std::uint8_t after = ClassOf(text[base + 64]);
      letter_after = after == kLetter ? 1 : 0;
      digit_after = after == kDigit ? 1 : 0;
    }
    const std::uint64_t letter_left = (bits.letter << 1) | letter_before;
    const std::uint64_t letter_right = (bits.letter >> 1) | (letter_after << 63);
    const std::uint64_t digit_left = (bits.digit << 1) | digit_before;
    const std::uint64_t digit_right = (bits.digit >> 1) | (digit_after << 63);
    const std::uint64_t joins = (bits.mid_num_let & letter_left & letter_right) |
                                ((bits.mid_num_let | bits.mid_num) & digit_left & digit_right);
    const std::uint64_t in_run = bits.word | joins;
    letter_before = bits.letter >> 63;
    digit_before = bits.digit >> 63;

    std::uint64_t rest = ~std::uint64_t{0};  // The bits of the block not yet read.
    while (rest != 0) {
      if (!in_word) {
        const std::uint64_t starts = in_run & rest;
        if (starts == 0) break;
        const int first = __builtin_ctzll(starts);
        word_start = base + static_cast<std::size_t>(first);
        word_alnum = false;
        in_word = true;
        rest &= ~std::uint64_t{0} << first;
      }
      const std::uint64_t ends = ~in_run & rest;
      if (ends == 0) {  // The word runs on into the next block.
        word_alnum = word_alnum || (bits.alnum & rest) != 0;
        break;
      }
      const int end = __builtin_ctzll(ends);
      const std::uint64_t word_bits = rest & ~(~std::uint64_t{0} << end);
      word_alnum = word_alnum || (bits.alnum & word_bits) != 0;
      in_word = false;
      const std::size_t word_end = base + static_cast<std::size_t>(end);
      if (word_alnum && !on_word(text.substr(word_start, word_end - word_start))) return;
      rest &= ~std::uint64_t{0} << end;
    }
  }
  if (in_word && word_alnum) on_word(text.substr(word_start));
#else
  ForEachAsciiWordByByte(text, on_word);
#endif
}

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_ASCII_WORDS_H_
