// How a key of each kind (keys.h) reads, checks, stores and shows its value: the setters and
// formatters of the keys that need their own, and the builders (UnsignedKey, DoubleKey, BoolKey,
// StringKey, ChoiceKey, OptionalScoreKey) the key table in keys.cc is written with. Internal to
// config/. Pure; thread-safe.
#ifndef NBSPAMD_CONFIG_KEY_KINDS_H_
#define NBSPAMD_CONFIG_KEY_KINDS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "config/keys.h"
#include "config/settings.h"

namespace nbspamd::config {

// An unsigned key without an upper bound but the size type's.
inline constexpr std::uint64_t kSizeMax = std::numeric_limits<std::size_t>::max();

// A TOML basic string holding `text`.
[[nodiscard]] std::string QuoteToml(std::string_view text);

[[nodiscard]] std::string FormatListen(const Settings& settings);

[[nodiscard]] std::optional<std::uint64_t> ParseUnsigned(std::string_view text);

[[nodiscard]] std::optional<double> ParseDouble(std::string_view text);

[[nodiscard]] std::optional<bool> ParseBool(std::string_view text);

bool SetListen(Settings& settings, const Value& value);

// "" (off) or "HOST:PORT" / "[IPV6]:PORT".
bool SetSpamdListen(Settings& settings, const Value& value);

// "" (standalone), or "HOST:PORT" of Redis with a port from 1 to 65535.
bool SetClusterRedis(Settings& settings, const Value& value);

// "" or "HOST:PORT,HOST:PORT,..." of Redis Sentinels.
bool SetClusterSentinels(Settings& settings, const Value& value);

// cluster_join_from: "" or "http[s]://HOST:PORT,..." (join_peers.h).
bool SetClusterJoinFrom(Settings& settings, const Value& value);

// cluster_min_replicas: "" (by default) or 0..16, as a string.
bool SetClusterMinReplicas(Settings& settings, const Value& value);
std::string FormatClusterMinReplicas(const Settings& settings);

// train_margin: "" (learn every message) or a finite number of at least 0.
bool SetTrainMargin(Settings& settings, const Value& value);

// Octal file permissions, "0660" or "660", at most 0777.
bool SetSocketMode(Settings& settings, const Value& value);

[[nodiscard]] std::string FormatSocketMode(const Settings& settings);

// byte_ngrams: 0 (off) or 3..8 (tokenizer/byte_ngrams.h).
bool SetByteNgrams(Settings& settings, const Value& value);
// char_ngrams: 0 (off) or 2..8 (tokenizer::TokenizerOptions::word_char_ngrams).
bool SetCharNgrams(Settings& settings, const Value& value);

// "" (never) or a finite number.
template <auto kMember>
bool SetOptionalScore(Settings& settings, const Value& value) {
  const std::string& text = std::get<std::string>(value);
  if (text.empty()) {
    settings.*kMember = std::nullopt;
    return true;
  }
  const std::optional<double> x = ParseDouble(text);
  if (!x || !std::isfinite(*x)) return false;
  settings.*kMember = *x;
  return true;
}

template <auto kMember>
std::string FormatOptionalScore(const Settings& settings) {
  const std::optional<double>& x = settings.*kMember;
  return QuoteToml(x ? FormatDouble(*x) : std::string());
}

template <auto kMember>
constexpr Key OptionalScoreKey(std::string_view name, std::string_view help) {
  return Key{.name = name,
             .metavar = "SCORE",
             .help = help,
             .kind = Kind::kString,
             .valid = "\"\" (never) or a finite number, as a string",
             .set = &SetOptionalScore<kMember>,
             .format = &FormatOptionalScore<kMember>};
}

template <auto kMember, std::uint64_t kMin, std::uint64_t kMax>
bool SetUnsigned(Settings& settings, const Value& value) {
  using Field = std::remove_cvref_t<decltype(std::declval<Settings&>().*kMember)>;
  static_assert(kMax <= std::numeric_limits<Field>::max());
  const std::uint64_t number = std::get<std::uint64_t>(value);
  if (number < kMin || number > kMax) return false;
  settings.*kMember = static_cast<Field>(number);
  return true;
}

template <auto kMember>
std::string FormatUnsigned(const Settings& settings) {
  return std::to_string(settings.*kMember);
}

template <auto kMember>
bool SetBool(Settings& settings, const Value& value) {
  settings.*kMember = std::get<bool>(value);
  return true;
}

template <auto kMember>
std::string FormatBool(const Settings& settings) {
  return settings.*kMember ? "true" : "false";
}

template <auto kMember, std::uint64_t kMin, std::uint64_t kMax>
constexpr Key UnsignedKey(std::string_view name, std::string_view metavar, std::string_view help) {
  return Key{.name = name,
             .metavar = metavar,
             .help = help,
             .kind = Kind::kUnsigned,
             .valid = {},
             .min = kMin,
             .max = kMax,
             .set = &SetUnsigned<kMember, kMin, kMax>,
             .format = &FormatUnsigned<kMember>};
}

// Which finite doubles a key takes.
enum class DoubleRange { kAny, kPositive, kNonNegative, kOpenUnit, kUnitFromZero, kAtLeastOne };

template <auto kMember, DoubleRange kRange>
bool SetDouble(Settings& settings, const Value& value) {
  const double x = std::get<double>(value);
  if (!std::isfinite(x)) return false;
  if (kRange == DoubleRange::kPositive && !(x > 0)) return false;
  if (kRange == DoubleRange::kNonNegative && x < 0) return false;
  if (kRange == DoubleRange::kOpenUnit && !(x > 0 && x < 1)) return false;
  if (kRange == DoubleRange::kUnitFromZero && !(x >= 0 && x < 1)) return false;
  if (kRange == DoubleRange::kAtLeastOne && !(x >= 1)) return false;
  settings.*kMember = x;
  return true;
}

template <auto kMember>
std::string FormatDoubleMember(const Settings& settings) {
  return FormatDouble(settings.*kMember);
}

template <auto kMember, DoubleRange kRange>
constexpr Key DoubleKey(std::string_view name, std::string_view help, std::string_view valid) {
  return Key{.name = name,
             .metavar = "X",
             .help = help,
             .kind = Kind::kDouble,
             .valid = valid,
             .set = &SetDouble<kMember, kRange>,
             .format = &FormatDoubleMember<kMember>};
}

template <auto kMember>
constexpr Key BoolKey(std::string_view name, std::string_view help) {
  return Key{.name = name,
             .metavar = "BOOL",
             .help = help,
             .kind = Kind::kBool,
             .valid = "true or false (1/0, yes/no, on/off)",
             .set = &SetBool<kMember>,
             .format = &FormatBool<kMember>};
}

template <auto kMember, bool kMayBeEmpty>
constexpr Key StringKey(std::string_view name, std::string_view metavar, std::string_view help) {
  return Key{.name = name,
             .metavar = metavar,
             .help = help,
             .kind = Kind::kString,
             .valid = kMayBeEmpty ? "a string" : "a non-empty string",
             .set =
                 [](Settings& s, const Value& v) {
                   if (!kMayBeEmpty && std::get<std::string>(v).empty()) return false;
                   s.*kMember = std::get<std::string>(v);
                   return true;
                 },
             .format = [](const Settings& s) { return QuoteToml(s.*kMember); }};
}

// A string key whose value must be one of `kChoices`.
template <auto kMember, const auto& kChoices>
constexpr Key ChoiceKey(std::string_view name, std::string_view metavar, std::string_view valid,
                        std::string_view help) {
  return Key{.name = name,
             .metavar = metavar,
             .help = help,
             .kind = Kind::kString,
             .valid = valid,
             .set =
                 [](Settings& s, const Value& v) {
                   const std::string& text = std::get<std::string>(v);
                   if (std::ranges::find(kChoices, text) == std::end(kChoices)) return false;
                   s.*kMember = text;
                   return true;
                 },
             .format = [](const Settings& s) { return QuoteToml(s.*kMember); }};
}

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_KEY_KINDS_H_
