#include "tokenizer/byte_ngrams.h"

#include <cstring>

#include "common/token_hash.h"

namespace nbspamd::tokenizer {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// "b<n>:": the prefix of an n-gram's hashed text, kPrefixSize bytes.
constexpr std::size_t kPrefixSize = 3;
void WritePrefix(char* out, std::size_t n) {
  out[0] = 'b';
  out[1] = static_cast<char>('0' + n);
  out[2] = ':';
}

std::optional<int> HexValue(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return std::nullopt;
}

// The n-grams of `head`, n a constant so each window is copied by a fixed-size move and hashed
// from a buffer on the stack.
template <std::size_t kN>
void AddNgramsOf(std::string_view head, BagBuilder& bag) {
  char key[kPrefixSize + kN];
  WritePrefix(key, kN);
  char text[kMaxByteNgramText];  // A readable text, while the bag copies it.
  for (std::size_t i = 0; i + kN <= head.size(); ++i) {
    std::memcpy(key + kPrefixSize, head.data() + i, kN);
    const TokenHash hash = HashToken(std::string_view(key, sizeof key));
    // The text is written only for a hash's first occurrence, with keep_text.
    bag.AddOutsideBudget(hash, TokenSource::kByteNgram,
                         [&] { return ByteNgramText(head.substr(i, kN), text); });
  }
}

// Whether `line` (without its line break) is a line of base64: at least kMinBase64Line bytes of
// the base64 alphabet, then at most two '='.
bool IsBase64Line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t padding = 0;
  while (padding < 2 && padding < line.size() && line[line.size() - 1 - padding] == '=') ++padding;
  line.remove_suffix(padding);
  if (line.size() < kMinBase64Line) return false;
  for (const char ch : line) {
    const bool alphabet = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                          (ch >= '0' && ch <= '9') || ch == '+' || ch == '/';
    if (!alphabet) return false;
  }
  return true;
}

template <std::size_t kN>
void AddNgramsOutsideBase64(std::string_view head, BagBuilder& bag) {
  std::size_t span = 0;  // Where the run of lines not yet given n-grams starts.
  std::size_t line = 0;
  while (line < head.size()) {
    const std::size_t newline = head.find('\n', line);
    const std::size_t end = newline == std::string_view::npos ? head.size() : newline + 1;
    if (IsBase64Line(head.substr(line, end - line - (newline == std::string_view::npos ? 0 : 1)))) {
      AddNgramsOf<kN>(head.substr(span, line - span), bag);
      span = end;
    }
    line = end;
  }
  AddNgramsOf<kN>(head.substr(span), bag);
}

}  // namespace

std::size_t ByteNgramSize(const TokenizerOptions& options) {
  const std::size_t n = options.byte_ngrams;
  return n >= kMinByteNgram && n <= kMaxByteNgram ? n : 0;
}

TokenHash HashByteNgram(std::string_view bytes) {
  char key[kPrefixSize + kMaxByteNgram];
  WritePrefix(key, bytes.size());
  std::memcpy(key + kPrefixSize, bytes.data(), bytes.size());
  return HashToken(std::string_view(key, kPrefixSize + bytes.size()));
}

std::string_view ByteNgramText(std::string_view bytes, std::span<char, kMaxByteNgramText> out) {
  char* end = out.data();
  WritePrefix(end, bytes.size());
  end += kPrefixSize;
  *end++ = '"';
  for (const char ch : bytes) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte == '"' || byte == '\\') {
      *end++ = '\\';
      *end++ = ch;
    } else if (byte >= ' ' && byte <= '~') {
      *end++ = ch;
    } else {
      *end++ = '\\';
      *end++ = 'x';
      *end++ = kHexDigits[byte >> 4];
      *end++ = kHexDigits[byte & 15];
    }
  }
  *end++ = '"';
  return std::string_view(out.data(), static_cast<std::size_t>(end - out.data()));
}

std::optional<std::string> ByteNgramHashedText(std::string_view readable) {
  // `b<n>:"`, at least one byte and `"`.
  if (readable.size() < kPrefixSize + 3 || readable[0] != 'b' || readable[2] != ':' ||
      readable[3] != '"' || readable.back() != '"') {
    return std::nullopt;
  }
  // Below '0' wraps around to a large number.
  const std::size_t n = static_cast<unsigned char>(readable[1]) - std::size_t{'0'};
  if (n < kMinByteNgram || n > kMaxByteNgram) return std::nullopt;
  std::string hashed(readable.substr(0, kPrefixSize));
  const std::string_view quoted =
      readable.substr(kPrefixSize + 1, readable.size() - (kPrefixSize + 2));
  for (std::size_t i = 0; i < quoted.size(); ++i) {
    const auto byte = static_cast<unsigned char>(quoted[i]);
    if (byte < ' ' || byte > '~' || byte == '"') return std::nullopt;
    if (byte != '\\') {
      hashed += quoted[i];
    } else if (i + 1 < quoted.size() && (quoted[i + 1] == '"' || quoted[i + 1] == '\\')) {
      hashed += quoted[++i];
    } else if (i + 3 < quoted.size() && quoted[i + 1] == 'x') {
      const auto high = HexValue(quoted[i + 2]);
      const auto low = HexValue(quoted[i + 3]);
      if (!high || !low) return std::nullopt;
      hashed += static_cast<char>(*high * 16 + *low);
      i += 3;
    } else {
      return std::nullopt;
    }
  }
  if (hashed.size() != kPrefixSize + n) return std::nullopt;
  return hashed;
}

void AddByteNgrams(std::string_view head, std::size_t n, BagBuilder& bag) {
  switch (n) {
    case 3:
      return AddNgramsOutsideBase64<3>(head, bag);
    case 4:
      return AddNgramsOutsideBase64<4>(head, bag);
    case 5:
      return AddNgramsOutsideBase64<5>(head, bag);
    case 6:
      return AddNgramsOutsideBase64<6>(head, bag);
    case 7:
      return AddNgramsOutsideBase64<7>(head, bag);
    case 8:
      return AddNgramsOutsideBase64<8>(head, bag);
    default:
      return;  // Off.
  }
}

}  // namespace nbspamd::tokenizer
