// ASCII character classes and case folding, independent of the C locale (std::tolower and
// std::isalnum consult it on every call, and would change tokens if a process set one). Bytes
// at or above 0x80 are neither letters nor digits and are left as they are. Pure; thread-safe.
#ifndef NBSPAMD_TOKENIZER_ASCII_H_
#define NBSPAMD_TOKENIZER_ASCII_H_

#include <string>
#include <string_view>

namespace nbspamd::tokenizer {

constexpr char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// `text` with ASCII letters in lower case.
inline std::string AsciiLowered(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = AsciiLower(c);
  return lower;
}

// Whether `a` and `b` are equal ignoring ASCII case.
constexpr bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// Whether an unfolded header value has nothing for RFC 2047 decoding to change: 7-bit bytes only,
// and no "=?" (which every encoded word starts with).
constexpr bool IsPlainHeaderText(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return text.find("=?") == std::string_view::npos;
}

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_ASCII_H_
