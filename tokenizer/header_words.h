// HeaderWords: the words of a header field's value as header tokens use them (head:, rcvd:,
// to:; see tokenizer/mail_reader.h). Simpler than body words on purpose: header values are
// machine-made (hosts, addresses, ids, versions), so a word keeps its dots, hyphens,
// apostrophes and '$' ("mail.example.org", "x-mailer-2.1"), and a '!' right after it.
//
// A word is a run that starts with an ASCII letter or digit, goes on with letters, digits or
// ". _ ' $ -", and ends with a letter or digit (or one '!' that follows the run). It is lowered
// to ASCII lower case. Words of fewer than 3 characters and words of digits only (dates,
// times, counters: they say when, not what) are dropped. Any other byte (including every
// non-ASCII byte) separates words. Pure; thread-safe.
#ifndef NBSPAMD_TOKENIZER_HEADER_WORDS_H_
#define NBSPAMD_TOKENIZER_HEADER_WORDS_H_

#include <array>
#include <string>
#include <string_view>

namespace nbspamd::tokenizer {

// Calls add(word) for each word of `value`, in order, while add returns true.
template <typename Add>
void ForEachHeaderWord(std::string_view value, std::string& word, Add&& add);

// Implementation.
namespace header_words_internal {
// Per byte: kAlnum for an ASCII letter or digit, kInner for the other bytes a word goes on with.
enum : unsigned char { kOther = 0, kAlnum = 1, kInner = 2 };
inline constexpr auto kClass = [] {
  std::array<unsigned char, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      classes[c] = kAlnum;
    } else if (c == '.' || c == '_' || c == '\'' || c == '$' || c == '-') {
      classes[c] = kInner;
    }
  }
  return classes;
}();
inline bool IsAlnum(char c) { return kClass[static_cast<unsigned char>(c)] == kAlnum; }
inline bool IsInner(char c) { return kClass[static_cast<unsigned char>(c)] != kOther; }
}  // namespace header_words_internal

template <typename Add>
void ForEachHeaderWord(std::string_view value, std::string& word, Add&& add) {
  using header_words_internal::IsAlnum;
  using header_words_internal::IsInner;
  std::size_t i = 0;
  while (i < value.size()) {
    if (!IsAlnum(value[i])) {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < value.size() && IsInner(value[end])) ++end;
    std::size_t next = end;
    if (end < value.size() && value[end] == '!') {
      ++end;
      next = end;
    } else {
      while (!IsAlnum(value[end - 1])) --end;  // Stops at value[i], a letter or digit.
    }
    const std::string_view run = value.substr(i, end - i);
    i = next;
    if (run.size() < 3) continue;
    bool digits_only = true;
    word.resize(run.size());
    char* out = word.data();
    for (std::size_t k = 0; k < run.size(); ++k) {
      const char c = run[k];
      digits_only = digits_only && c >= '0' && c <= '9';
      out[k] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (digits_only) continue;
    if (!add(word)) return;
  }
}

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HEADER_WORDS_H_
