#include "tokenizer/simple_addresses.h"

#include <array>
#include <cstddef>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

// RFC 5322's atext: letters, digits and !#$%&'*+-/=?^_`{|}~.
constexpr std::array<bool, 256> kAtext = [] {
  std::array<bool, 256> atext{};
  for (int c = 'a'; c <= 'z'; ++c) atext[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) atext[c] = true;
  for (int c = '0'; c <= '9'; ++c) atext[c] = true;
  for (const char c : std::string_view("!#$%&'*+-/=?^_`{|}~")) {
    atext[static_cast<unsigned char>(c)] = true;
  }
  return atext;
}();

bool IsAtext(char c) { return kAtext[static_cast<unsigned char>(c)]; }
bool IsAddressBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsLabelByte(char c) { return IsAsciiAlnum(c) || c == '-'; }

void SkipAddressBlanks(std::string_view text, std::size_t& i) {
  while (i < text.size() && IsAddressBlank(text[i])) ++i;
}

// Reads local@domain at text[i] (the rules in the header), moving `i` past it; empty when
// there is none.
std::string_view AddrSpec(std::string_view text, std::size_t& i) {
  const std::size_t start = i;
  std::size_t j = i;
  while (true) {  // local: atext runs joined by single dots.
    const std::size_t run = j;
    while (j < text.size() && IsAtext(text[j])) ++j;
    if (j == run) return {};
    if (j < text.size() && text[j] == '.') {
      ++j;
      continue;
    }
    break;
  }
  if (j == text.size() || text[j] != '@') return {};
  ++j;
  while (true) {  // domain: labels joined by single dots.
    const std::size_t label = j;
    while (j < text.size() && IsLabelByte(text[j])) ++j;
    if (j == label || text[label] == '-' || text[j - 1] == '-') return {};
    if (j - label >= 4 && EqualsIgnoringAsciiCase(text.substr(label, 4), "xn--")) return {};
    if (j < text.size() && text[j] == '.') {
      ++j;
      continue;
    }
    break;
  }
  i = j;
  return text.substr(start, j - start);
}

// Reads one address at text[i], moving `i` past it.
std::optional<SimpleAddress> Address(std::string_view text, std::size_t& i) {
  SimpleAddress address;
  if (i < text.size() && text[i] == '"') {
    const std::size_t close = text.find('"', i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    address.name = text.substr(i + 1, close - i - 1);
    i = close + 1;
    SkipAddressBlanks(text, i);
  } else if (i < text.size() && text[i] != '<') {
    std::size_t bare = i;
    if (const std::string_view addr = AddrSpec(text, bare); !addr.empty()) {
      std::size_t after = bare;
      SkipAddressBlanks(text, after);
      if (after == text.size() || text[after] == ',') {
        address.addr = addr;
        i = bare;
        return address;
      }
    }
    // Words of atext and dots, each starting with atext, the last not ending with a dot; then
    // the angle address.
    const std::size_t start = i;
    std::size_t end = i;
    while (i < text.size() && IsAtext(text[i])) {
      while (i < text.size() && (IsAtext(text[i]) || text[i] == '.')) ++i;
      end = i;
      SkipAddressBlanks(text, i);
    }
    if (end == start || text[end - 1] == '.') return std::nullopt;
    address.name = text.substr(start, end - start);
  }
  if (i == text.size() || text[i] != '<') return std::nullopt;
  ++i;
  address.addr = AddrSpec(text, i);
  if (address.addr.empty() || i == text.size() || text[i] != '>') return std::nullopt;
  ++i;
  return address;
}

}  // namespace

std::optional<std::vector<SimpleAddress>> ParseSimpleAddressList(std::string_view value) {
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 32 && !IsAddressBlank(c)) || byte > 126) return std::nullopt;
    switch (c) {
      case '(':
      case ')':
      case '[':
      case ']':
      case '\\':
      case ':':
      case ';':
        return std::nullopt;
      default:
        break;
    }
  }
  if (value.find("=?") != std::string_view::npos) return std::nullopt;
  std::vector<SimpleAddress> addresses;
  std::size_t i = 0;
  while (true) {
    SkipAddressBlanks(value, i);
    std::optional<SimpleAddress> address = Address(value, i);
    if (!address.has_value()) return std::nullopt;
    addresses.push_back(*address);
    SkipAddressBlanks(value, i);
    if (i == value.size()) return addresses;
    if (value[i] != ',') return std::nullopt;
    ++i;
  }
}

}  // namespace nbspamd::tokenizer
