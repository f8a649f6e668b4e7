#include "config/key_kinds.h"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "config/join_peers.h"

namespace nbspamd::config {
namespace {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

// Parses "HOST:PORT" or "[IPV6]:PORT".
std::optional<HostPort> ParseHostPort(std::string_view text) {
  std::string_view host;
  std::string_view rest;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (host.find_first_of("[]") != std::string_view::npos) return std::nullopt;
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = text.substr(0, colon);
    rest = text.substr(colon);
    // An IPv6 address needs brackets, or its last group would be taken for the port.
    if (host.find_first_of(":[]") != std::string_view::npos) return std::nullopt;
  }
  if (host.empty() || host.find_first_of(" \t\r\n/") != std::string_view::npos) {
    return std::nullopt;
  }
  if (!rest.starts_with(':')) return std::nullopt;
  const std::optional<std::uint64_t> port = ParseUnsigned(rest.substr(1));
  if (!port || *port > std::numeric_limits<std::uint16_t>::max()) return std::nullopt;
  return HostPort{std::string(host), static_cast<std::uint16_t>(*port)};
}

}  // namespace

// A TOML basic string holding `text`.
std::string QuoteToml(std::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\b':
        quoted += "\\b";
        break;
      case '\t':
        quoted += "\\t";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\f':
        quoted += "\\f";
        break;
      case '\r':
        quoted += "\\r";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          constexpr char kHex[] = "0123456789ABCDEF";
          quoted += "\\u00";
          quoted += kHex[byte >> 4];
          quoted += kHex[byte & 0xf];
        } else {
          quoted += c;
        }
    }
  }
  quoted += '"';
  return quoted;
}

std::string FormatListen(const Settings& settings) {
  const bool ipv6 = settings.listen_host.find(':') != std::string::npos;
  return ipv6 ? "[" + settings.listen_host + "]:" + std::to_string(settings.listen_port)
              : settings.listen_host + ":" + std::to_string(settings.listen_port);
}

std::optional<std::uint64_t> ParseUnsigned(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  if (lower == "true" || lower == "1" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "0" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

bool SetListen(Settings& settings, const Value& value) {
  auto parsed = ParseHostPort(std::get<std::string>(value));
  if (!parsed) return false;
  settings.listen_host = std::move(parsed->host);
  settings.listen_port = parsed->port;
  return true;
}

// "" (off) or "HOST:PORT" / "[IPV6]:PORT".
bool SetSpamdListen(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  if (text.empty()) {
    settings.spamd_listen.clear();
    settings.spamd_listen_host.clear();
    settings.spamd_listen_port = 0;
    return true;
  }
  auto parsed = ParseHostPort(text);
  if (!parsed) return false;
  settings.spamd_listen = text;
  settings.spamd_listen_host = std::move(parsed->host);
  settings.spamd_listen_port = parsed->port;
  return true;
}

// "" (standalone), or "HOST:PORT" of Redis with a port from 1 to 65535.
bool SetClusterRedis(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  if (text.empty()) {
    settings.cluster_redis.clear();
    settings.cluster_redis_host.clear();
    settings.cluster_redis_port = 0;
    return true;
  }
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string host = text.substr(0, colon);
  if (host.find_first_of(" \t\r\n/[]") != std::string::npos) return false;
  const std::optional<std::uint64_t> port = ParseUnsigned(std::string_view(text).substr(colon + 1));
  if (!port || *port == 0 || *port > std::numeric_limits<std::uint16_t>::max()) return false;
  settings.cluster_redis = text;
  settings.cluster_redis_host = host;
  settings.cluster_redis_port = static_cast<std::uint16_t>(*port);
  return true;
}

bool SetClusterSentinels(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  if (text.empty()) {
    settings.cluster_sentinels.clear();
    return true;
  }
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    Settings probe;
    if (!SetClusterRedis(probe, Value(std::string(item)))) return false;
    if (item.empty()) return false;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  settings.cluster_sentinels = text;
  return true;
}

bool SetClusterJoinFrom(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  if (!text.empty() && !ParseJoinPeers(text)) return false;
  settings.cluster_join_from = text;
  return true;
}

bool SetClusterMinReplicas(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  if (text.empty()) {
    settings.cluster_min_replicas = std::nullopt;
    return true;
  }
  const std::optional<std::uint64_t> n = ParseUnsigned(text);
  if (!n || *n > 16) return false;
  settings.cluster_min_replicas = static_cast<unsigned>(*n);
  return true;
}

std::string FormatClusterMinReplicas(const Settings& settings) {
  return QuoteToml(settings.cluster_min_replicas ? std::to_string(*settings.cluster_min_replicas)
                                                 : std::string());
}

// train_margin: "" (learn every message) or a finite number of at least 0.
bool SetTrainMargin(Settings& settings, const Value& value) {
  if (!SetOptionalScore<&Settings::train_margin>(settings, value)) return false;
  return !settings.train_margin || *settings.train_margin >= 0;
}

// Octal file permissions, "0660" or "660", at most 0777.
bool SetSocketMode(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  unsigned mode = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || mode > 0777) {
    return false;
  }
  settings.milter_socket_mode = mode;
  return true;
}

std::string FormatSocketMode(const Settings& settings) {
  std::array<char, 8> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data() + 1, buffer.data() + buffer.size(),
                                       settings.milter_socket_mode, 8);
  buffer[0] = '0';
  return QuoteToml(std::string(buffer.data(), ec == std::errc() ? end : buffer.data() + 1));
}

// byte_ngrams: 0 (off) or 3..8 (tokenizer/byte_ngrams.h).
bool SetByteNgrams(Settings& settings, const Value& value) {
  const std::uint64_t n = std::get<std::uint64_t>(value);
  if (n != 0 && (n < 3 || n > 8)) return false;
  settings.byte_ngrams = static_cast<std::size_t>(n);
  return true;
}

// char_ngrams: 0 (off) or 2..8 (tokenizer::TokenizerOptions::word_char_ngrams).
bool SetCharNgrams(Settings& settings, const Value& value) {
  const std::uint64_t n = std::get<std::uint64_t>(value);
  if (n != 0 && (n < 2 || n > 8)) return false;
  settings.char_ngrams = static_cast<std::size_t>(n);
  return true;
}

std::string FormatDouble(double value) {
  std::array<char, 64> buffer;
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  std::string text(buffer.data(), ec == std::errc() ? end : buffer.data());
  // TOML floats need a fraction or an exponent; inf and nan are spelt inf and nan in both.
  if (text.find_first_of(".eEin") == std::string::npos) text += ".0";
  return text;
}

std::string Valid(const Key& key) {
  if (!key.valid.empty()) return std::string(key.valid);
  if (key.max == kSizeMax) return "a whole number of at least " + std::to_string(key.min);
  return "a whole number from " + std::to_string(key.min) + " to " + std::to_string(key.max);
}

std::unexpected<Error> InvalidArgument(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

std::unexpected<Error> InvalidValue(std::string_view where, std::string_view shown, const Key& key,
                                    std::string_view suffix) {
  return InvalidArgument(std::string(where) + ": invalid value '" + std::string(shown) + "' for '" +
                         std::string(key.name) + "': expected " + Valid(key) + std::string(suffix));
}

// Parses `text` (from the environment or a flag named `where`) as `key` and stores it.
std::expected<void, Error> ApplyText(Settings& settings, const Key& key, std::string_view text,
                                     std::string_view where) {
  std::optional<Value> value;
  switch (key.kind) {
    case Kind::kBool:
      if (const auto parsed = ParseBool(text)) value = *parsed;
      break;
    case Kind::kUnsigned:
      if (const auto parsed = ParseUnsigned(text)) value = *parsed;
      break;
    case Kind::kDouble:
      if (const auto parsed = ParseDouble(text)) value = *parsed;
      break;
    case Kind::kString:
      value = std::string(text);
      break;
  }
  if (!value || !key.set(settings, *value)) return InvalidValue(where, text, key);
  return {};
}

}  // namespace nbspamd::config
