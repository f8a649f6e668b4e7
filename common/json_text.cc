#include "common/json_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

namespace nbspamd {
namespace {

namespace json = boost::json;

template <typename Number>
void AppendChars(std::string& out, Number value) {
  std::array<char, 32> text;
  const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), value);
  // 32 characters hold any 64-bit integer and any shortest double (at most 24).
  out.append(text.data(), ec == std::errc() ? end : text.data());
}

void AppendDouble(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  AppendChars(out, value);
}

void AppendString(std::string& out, std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace

void AppendJson(std::string& out, const json::value& value) {
  switch (value.kind()) {
    case json::kind::null:
      out += "null";
      return;
    case json::kind::bool_:
      out += value.get_bool() ? "true" : "false";
      return;
    case json::kind::int64:
      AppendChars(out, value.get_int64());
      return;
    case json::kind::uint64:
      AppendChars(out, value.get_uint64());
      return;
    case json::kind::double_:
      AppendDouble(out, value.get_double());
      return;
    case json::kind::string:
      AppendString(out, value.get_string());
      return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const json::value& item : value.get_array()) {
        if (!first) out += ',';
        first = false;
        AppendJson(out, item);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (const json::key_value_pair& item : value.get_object()) {
        if (!first) out += ',';
        first = false;
        AppendString(out, item.key());
        out += ':';
        AppendJson(out, item.value());
      }
      out += '}';
      return;
    }
  }
}

std::string WriteJson(const json::value& value) {
  std::string out;
  AppendJson(out, value);
  return out;
}

std::string JsonNumber(double value) {
  std::string out;
  AppendDouble(out, value);
  return out;
}

}  // namespace nbspamd
