#include "tokenizer/simple_field_value.h"

#include <array>
#include <cstddef>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

// RFC 2045's token bytes: 33..126 but the tspecials.
constexpr std::array<bool, 256> kMimeTokenBytes = [] {
  std::array<bool, 256> token{};
  for (int byte = 33; byte <= 126; ++byte) token[byte] = true;
  for (const char special : std::string_view("()<>@,;:\\\"/[]?=")) {
    token[static_cast<unsigned char>(special)] = false;
  }
  return token;
}();

bool IsValueBlank(char c) { return c == ' ' || c == '\t'; }

// Reads a token at `text[i]`, moving `i` past it; empty when there is none.
std::string_view MimeToken(std::string_view text, std::size_t& i) {
  const std::size_t start = i;
  while (i < text.size() && kMimeTokenBytes[static_cast<unsigned char>(text[i])]) ++i;
  return text.substr(start, i - start);
}

void SkipValueBlanks(std::string_view text, std::size_t& i) {
  while (i < text.size() && IsValueBlank(text[i])) ++i;
}

}  // namespace

std::optional<std::string_view> SimpleFieldValue::Find(std::string_view name) const {
  for (const Parameter& parameter : parameters) {
    if (EqualsIgnoringAsciiCase(parameter.name, name)) return parameter.value;
  }
  return std::nullopt;
}

std::optional<SimpleFieldValue> ParseSimpleFieldValue(std::string_view value, bool with_subtype) {
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 32 && c != '\t') || byte > 126) return std::nullopt;
  }
  SimpleFieldValue parsed;
  std::size_t i = 0;
  parsed.type = MimeToken(value, i);
  if (parsed.type.empty()) return std::nullopt;
  if (with_subtype) {
    if (i == value.size() || value[i] != '/') return std::nullopt;
    ++i;
    parsed.subtype = MimeToken(value, i);
    if (parsed.subtype.empty()) return std::nullopt;
  }
  while (true) {
    SkipValueBlanks(value, i);
    if (i == value.size()) return parsed;
    if (value[i] != ';') return std::nullopt;
    ++i;
    SkipValueBlanks(value, i);
    if (i == value.size()) return parsed;  // One ';' after the last parameter.
    const std::string_view name = MimeToken(value, i);
    if (name.empty() || name.find('*') != std::string_view::npos) return std::nullopt;
    if (i == value.size() || value[i] != '=') return std::nullopt;
    ++i;
    std::string_view parameter_value;
    if (i < value.size() && value[i] == '"') {
      const std::size_t close = value.find('"', i + 1);
      if (close == std::string_view::npos || close == i + 1) return std::nullopt;
      parameter_value = value.substr(i + 1, close - i - 1);
      if (parameter_value.find('\\') != std::string_view::npos ||
          parameter_value.find("=?") != std::string_view::npos) {
        return std::nullopt;
      }
      i = close + 1;
    } else {
      parameter_value = MimeToken(value, i);
      if (parameter_value.empty()) return std::nullopt;
    }
    if (parsed.Find(name).has_value()) return std::nullopt;
    parsed.parameters.push_back({name, parameter_value});
  }
}

}  // namespace nbspamd::tokenizer
