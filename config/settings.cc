#include "config/settings.h"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace nbspamd::config {
namespace {

namespace po = boost::program_options;

constexpr std::string_view kEnvPrefix = "NBSPAMD_";
constexpr std::string_view kConfigEnv = "NBSPAMD_CONFIG";
constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;

// The C++ type a key's value has before validation.
enum class Kind { kBool, kUnsigned, kDouble, kString };

// A parsed, not yet validated value; the alternative matches the key's Kind.
using Value = std::variant<bool, std::uint64_t, double, std::string>;

// One configurable key. The table of these drives TOML, environment, flags and help.
struct Key {
  std::string_view name;     // TOML key; the flag and the environment variable derive from it.
  std::string_view metavar;  // Placeholder for the value in the help text.
  std::string_view help;     // One sentence for the help text.
  Kind kind;
  // Valid values in words ("a finite number greater than 0"); empty for kUnsigned keys, whose
  // description is made from min and max.
  std::string_view valid;
  std::uint64_t min = 0;  // kUnsigned only.
  std::uint64_t max = 0;  // kUnsigned only.
  // Validates `value` (of `kind`) and stores it in the settings; false if it is not valid.
  bool (*set)(Settings&, const Value&) = nullptr;
  // The current value as a TOML value ("\"data\"", "7830", "true", "1.0").
  std::string (*format)(const Settings&) = nullptr;
};

std::string FormatDouble(double value) {
  std::array<char, 64> buffer;
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  std::string text(buffer.data(), ec == std::errc() ? end : buffer.data());
  // TOML floats need a fraction or an exponent; inf and nan are spelt inf and nan in both.
  if (text.find_first_of(".eEin") == std::string::npos) text += ".0";
  return text;
}

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

// Parses "HOST:PORT" or "[IPV6]:PORT" into the settings.
bool SetListen(Settings& settings, const Value& value) {
  const std::string_view text = std::get<std::string>(value);
  std::string_view host;
  std::string_view rest;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (host.find_first_of("[]") != std::string_view::npos) return false;
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return false;
    host = text.substr(0, colon);
    rest = text.substr(colon);
    // An IPv6 address needs brackets, or its last group would be taken for the port.
    if (host.find_first_of(":[]") != std::string_view::npos) return false;
  }
  if (host.empty() || host.find_first_of(" \t\r\n/") != std::string_view::npos) return false;
  if (!rest.starts_with(':')) return false;
  const std::optional<std::uint64_t> port = ParseUnsigned(rest.substr(1));
  if (!port || *port > std::numeric_limits<std::uint16_t>::max()) return false;
  settings.listen_host = std::string(host);
  settings.listen_port = static_cast<std::uint16_t>(*port);
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
enum class DoubleRange { kAny, kPositive, kNonNegative };

template <auto kMember, DoubleRange kRange>
bool SetDouble(Settings& settings, const Value& value) {
  const double x = std::get<double>(value);
  if (!std::isfinite(x)) return false;
  if (kRange == DoubleRange::kPositive && !(x > 0)) return false;
  if (kRange == DoubleRange::kNonNegative && x < 0) return false;
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

constexpr std::string_view kLogLevels[] = {"debug", "info", "warning", "error"};
constexpr std::string_view kLogFormats[] = {"logfmt", "json"};

constexpr std::uint64_t kSizeMax = std::numeric_limits<std::size_t>::max();

constexpr std::array kKeys = {
    Key{.name = "listen",
        .metavar = "HOST:PORT",
        .help = "Address to listen on; port 0 picks a free port.",
        .kind = Kind::kString,
        .valid = "HOST:PORT with a port from 0 to 65535, an IPv6 host in brackets as in [::1]:7830",
        .set = &SetListen,
        .format = [](const Settings& s) { return QuoteToml(FormatListen(s)); }},
    Key{.name = "data_dir",
        .metavar = "DIR",
        .help = "Folder of the RocksDB model database (created if missing).",
        .kind = Kind::kString,
        .valid = "a non-empty path",
        .set =
            [](Settings& s, const Value& v) {
              if (std::get<std::string>(v).empty()) return false;
              s.data_dir = std::get<std::string>(v);
              return true;
            },
        .format = [](const Settings& s) { return QuoteToml(s.data_dir); }},
    UnsignedKey<&Settings::threads, 0, 256>("threads", "N",
                                            "Worker threads; 0 means one per hardware thread."),
    DoubleKey<&Settings::alpha, DoubleRange::kPositive>(
        "alpha", "Laplace smoothing of the token probabilities.", "a finite number greater than 0"),
    DoubleKey<&Settings::spam_threshold, DoubleRange::kAny>(
        "spam_threshold", "A message is spam when its score is greater than this.",
        "a finite number"),
    DoubleKey<&Settings::ham_threshold, DoubleRange::kAny>(
        "ham_threshold",
        "A message is ham when its score is at most this, unsure between this and "
        "spam_threshold; unset, it is -0.6 or spam_threshold when that is lower.",
        "a finite number, not greater than spam_threshold"),
    DoubleKey<&Settings::score_min_weight, DoubleRange::kNonNegative>(
        "score_min_weight",
        "Tokens whose weight (log-likelihood ratio) is at most this in absolute value do not "
        "count in the score.",
        "a finite number of at least 0"),
    UnsignedKey<&Settings::max_body_bytes, 1, kGiB>(
        "max_body_bytes", "BYTES", "Largest HTTP request body; a larger one gets 413."),
    UnsignedKey<&Settings::max_header_bytes, kKiB, kMiB>("max_header_bytes", "BYTES",
                                                         "Largest HTTP request header."),
    UnsignedKey<&Settings::idle_timeout_seconds, 1, 86400>(
        "idle_timeout_seconds", "SECONDS", "How long an idle keep-alive connection stays open."),
    UnsignedKey<&Settings::shutdown_timeout_seconds, 0, 3600>(
        "shutdown_timeout_seconds", "SECONDS",
        "How long SIGTERM waits for requests in flight before closing them."),
    UnsignedKey<&Settings::max_message_bytes, 1, kSizeMax>(
        "max_message_bytes", "BYTES", "Bytes of a message the tokenizer looks at."),
    UnsignedKey<&Settings::max_tokens, 1, kSizeMax>("max_tokens", "N",
                                                    "Tokens the tokenizer takes from a message."),
    UnsignedKey<&Settings::max_token_chars, 1, 1000>("max_token_chars", "N",
                                                     "Longer words (in code points) are dropped."),
    BoolKey<&Settings::boolean_counts>("boolean_counts", "Count each token once per message."),
    BoolKey<&Settings::header_tokens>(
        "header_tokens", "Make tokens from mail headers (subject:, from-domain:, received: ...)."),
    BoolKey<&Settings::word_bigrams>("word_bigrams",
                                     "Also make a token of each pair of consecutive words."),
    StringKey<&Settings::backup_dir, false>(
        "backup_dir", "DIR", "Folder where POST /admin/backup writes model checkpoints."),
    StringKey<&Settings::auth_tokens, true>(
        "auth_tokens", "NAME:SECRET,...",
        "Bearer tokens; with any, /train, /forget and /admin/* need one."),
    StringKey<&Settings::auth_tokens_file, true>("auth_tokens_file", "FILE",
                                                 "File of bearer tokens, one NAME:SECRET a line."),
    BoolKey<&Settings::auth_classify>("auth_classify",
                                      "Also require a bearer token for /classify."),
    UnsignedKey<&Settings::max_in_flight, 1, 1000000>(
        "max_in_flight", "N", "Requests handled at once; more get 503 at once."),
    Key{.name = "train_rate_limit",
        .metavar = "PER_SECOND",
        .help = "Training requests a second per token (a burst of one second's worth); 0 = none.",
        .kind = Kind::kDouble,
        .valid = "a finite number of at least 0",
        .set =
            [](Settings& s, const Value& v) {
              const double x = std::get<double>(v);
              if (!std::isfinite(x) || x < 0) return false;
              s.train_rate_limit = x;
              return true;
            },
        .format = [](const Settings& s) { return FormatDouble(s.train_rate_limit); }},
    ChoiceKey<&Settings::log_level, kLogLevels>(
        "log_level", "LEVEL", "debug, info, warning or error",
        "Log events of this level and above; debug adds a line per request."),
    ChoiceKey<&Settings::log_format, kLogFormats>("log_format", "FORMAT", "logfmt or json",
                                                  "Log lines as logfmt or as JSON objects."),
    Key{.name = "cluster_redis",
        .metavar = "HOST:PORT",
        .help = "Redis of cluster mode: training goes through its stream; \"\" = standalone.",
        .kind = Kind::kString,
        .valid = "\"\" or HOST:PORT with a port from 1 to 65535",
        .set = &SetClusterRedis,
        .format = [](const Settings& s) { return QuoteToml(s.cluster_redis); }},
    StringKey<&Settings::cluster_stream, false>(
        "cluster_stream", "KEY", "Redis key of the training stream shared by the daemons."),
    StringKey<&Settings::cluster_name, true>(
        "cluster_name", "NAME", "This daemon's name in the cluster; \"\" = hostname:port."),
    BoolKey<&Settings::cluster_wait_applied>(
        "cluster_wait_applied",
        "Answer /train and /forget once applied here, not as soon as Redis has them."),
    UnsignedKey<&Settings::cluster_retention_seconds, 60, 31536000>(
        "cluster_retention_seconds", "SECONDS",
        "Stream entries are kept at least this long; a checkpoint younger than this can join."),
};

std::string Valid(const Key& key) {
  if (!key.valid.empty()) return std::string(key.valid);
  if (key.max == kSizeMax) return "a whole number of at least " + std::to_string(key.min);
  return "a whole number from " + std::to_string(key.min) + " to " + std::to_string(key.max);
}

std::string FlagName(std::string_view name) {
  std::string flag(name);
  std::ranges::replace(flag, '_', '-');
  return "--" + flag;
}

std::string EnvName(std::string_view name) {
  std::string env(kEnvPrefix);
  for (const char c : name) env += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return env;
}

const Key* FindKey(std::string_view name) {
  const auto it = std::ranges::find(kKeys, name, &Key::name);
  return it == kKeys.end() ? nullptr : &*it;
}

std::unexpected<Error> InvalidArgument(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

// "<where>: invalid value '<shown>' for '<key>': expected <valid><suffix>"
std::unexpected<Error> InvalidValue(std::string_view where, std::string_view shown, const Key& key,
                                    std::string_view suffix = {}) {
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

std::string_view TomlTypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string_view ExpectedTomlType(Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "a boolean";
    case Kind::kUnsigned:
      return "an integer";
    case Kind::kDouble:
      return "a number";
    case Kind::kString:
      return "a string";
  }
  return "a value";
}

std::string LineSuffix(const toml::source_region& source) {
  if (source.begin.line == 0) return {};
  return " (line " + std::to_string(source.begin.line) + ")";
}

// Stores the TOML `node` found under `key`; `where` is "config file <path>".
std::expected<void, Error> ApplyToml(Settings& settings, const Key& key, const toml::node& node,
                                     std::string_view where) {
  const std::string line = LineSuffix(node.source());
  std::optional<Value> value;
  std::string shown;
  switch (key.kind) {
    case Kind::kBool:
      if (const auto* b = node.as_boolean()) {
        value = b->get();
        shown = b->get() ? "true" : "false";
      }
      break;
    case Kind::kUnsigned:
      if (const auto* i = node.as_integer()) {
        shown = std::to_string(i->get());
        if (i->get() < 0) return InvalidValue(where, shown, key, line);
        value = static_cast<std::uint64_t>(i->get());
      }
      break;
    case Kind::kDouble:
      if (const auto* f = node.as_floating_point()) {
        value = f->get();
        shown = FormatDouble(f->get());
      } else if (const auto* i = node.as_integer()) {
        value = static_cast<double>(i->get());
        shown = std::to_string(i->get());
      }
      break;
    case Kind::kString:
      if (const auto* s = node.as_string()) {
        value = s->get();
        shown = s->get();
      }
      break;
  }
  if (!value) {
    return InvalidArgument(std::string(where) + ": wrong type for '" + std::string(key.name) +
                           "': expected " + std::string(ExpectedTomlType(key.kind)) + ", got " +
                           std::string(TomlTypeName(node.type())) + line);
  }
  if (!key.set(settings, *value)) return InvalidValue(where, shown, key, line);
  return {};
}

// Reads the flat TOML file at `path` into `settings`.
std::expected<void, Error> ApplyTomlFile(Settings& settings, const std::string& path) {
  const std::string where = "config file " + path;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return InvalidArgument(where + ": no such file");
  if (std::filesystem::is_directory(status)) return InvalidArgument(where + ": is a folder");
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return InvalidArgument(where + ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return InvalidArgument(where + ": cannot read");

  toml::table table;
  try {
    table = toml::parse(contents.str(), path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return InvalidArgument(where + ": invalid TOML: " + std::string(e.description()) + " (line " +
                           std::to_string(begin.line) + ", column " + std::to_string(begin.column) +
                           ")");
  }

  // Report problems in the order they appear in the file (the table is sorted by key).
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [name, node] : table) entries.emplace_back(&name, &node);
  std::ranges::stable_sort(entries, {}, [](const auto& entry) {
    const auto& begin = entry.first->source().begin;
    return std::pair(begin.line, begin.column);
  });
  for (const auto& [name, node] : entries) {
    const Key* key = FindKey(name->str());
    if (key == nullptr) {
      std::vector<std::string> notes;
      if (const auto line = name->source().begin.line; line != 0) {
        notes.push_back("line " + std::to_string(line));
      }
      if (node->is_table()) notes.emplace_back("the file is flat, sections are not supported");
      std::string message = where + ": unknown key '" + std::string(name->str()) + "'";
      for (std::size_t i = 0; i < notes.size(); ++i) {
        message += (i == 0 ? " (" : "; ") + notes[i] + (i + 1 == notes.size() ? ")" : "");
      }
      return InvalidArgument(std::move(message));
    }
    if (auto applied = ApplyToml(settings, *key, *node, where); !applied) return applied;
  }
  return {};
}

// A key's value given on the command line or in the environment, with where it came from.
struct TextValue {
  const Key* key;
  std::string text;
  std::string where;  // "--threads" or "NBSPAMD_THREADS"
};

// What the command line holds, before the values are validated.
struct CommandLine {
  bool help = false;
  bool version = false;
  std::optional<std::string> config;
  std::vector<TextValue> values;
};

std::expected<CommandLine, Error> ParseCommandLine(std::span<const char* const> argv) {
  std::vector<std::string> args;
  for (std::size_t i = 1; i < argv.size() && argv[i] != nullptr; ++i) args.emplace_back(argv[i]);

  po::options_description description;
  description.add_options()("config", po::value<std::string>(), "")("help", "")("version", "");
  for (const Key& key : kKeys) {
    description.add_options()(FlagName(key.name).substr(2).c_str(), po::value<std::string>(), "");
  }

  // Long flags only, spelt out in full, case-sensitive; the value follows after '=' or as the
  // next argument.
  constexpr int kStyle = po::command_line_style::allow_long |
                         po::command_line_style::long_allow_adjacent |
                         po::command_line_style::long_allow_next;
  po::parsed_options parsed(&description);
  try {
    parsed = po::command_line_parser(args).options(description).style(kStyle).run();
  } catch (const po::unknown_option& e) {
    // For "--foo=1" the parser names "--foo=1"; the flag is "--foo".
    const std::string name = e.get_option_name();
    return InvalidArgument("unknown flag '" + name.substr(0, name.find('=')) + "'");
  } catch (const po::invalid_command_line_syntax& e) {
    switch (e.kind()) {
      case po::invalid_syntax::missing_parameter:
      case po::invalid_syntax::empty_adjacent_parameter:
        return InvalidArgument(e.get_option_name() + ": missing value");
      case po::invalid_syntax::extra_parameter:
        return InvalidArgument(e.get_option_name() + ": takes no value");
      default:
        return InvalidArgument(std::string("invalid command line: ") + e.what());
    }
  } catch (const po::error& e) {
    return InvalidArgument(std::string("invalid command line: ") + e.what());
  }

  CommandLine command_line;
  for (const po::option& option : parsed.options) {
    if (option.string_key.empty() || option.position_key >= 0) {
      const std::string argument = option.original_tokens.empty() ? "" : option.original_tokens[0];
      return InvalidArgument("unexpected argument '" + argument + "'");
    }
    const std::string flag = "--" + option.string_key;
    if (option.string_key == "help") {
      command_line.help = true;
      continue;
    }
    if (option.string_key == "version") {
      command_line.version = true;
      continue;
    }
    if (option.value.size() != 1) return InvalidArgument(flag + ": missing value");
    const std::string& text = option.value.front();
    // "--listen --threads 4": the flag lacks its value rather than having "--threads" as one.
    if (option.original_tokens.size() == 2 && text.starts_with("--")) {
      return InvalidArgument(flag + ": missing value (write " + flag + "=VALUE for a value " +
                             "beginning with '--')");
    }
    if (option.string_key == "config") {
      command_line.config = text;
      continue;
    }
    const auto* key =
        std::ranges::find_if(kKeys, [&](const Key& k) { return FlagName(k.name) == flag; });
    if (key == kKeys.end()) return InvalidArgument("unknown flag '" + flag + "'");
    command_line.values.push_back(TextValue{key, text, flag});
  }
  return command_line;
}

// The NBSPAMD_* variables of `environment`.
struct Environment {
  std::optional<std::string> config;
  std::vector<TextValue> values;
};

std::expected<Environment, Error> ParseEnvironment(std::span<const std::string> environment) {
  Environment result;
  for (const std::string& entry : environment) {
    const std::size_t equals = entry.find('=');
    if (equals == std::string::npos || !entry.starts_with(kEnvPrefix)) continue;
    const std::string name = entry.substr(0, equals);
    std::string text = entry.substr(equals + 1);
    if (name == kConfigEnv) {
      result.config = std::move(text);
      continue;
    }
    const auto* key =
        std::ranges::find_if(kKeys, [&](const Key& k) { return EnvName(k.name) == name; });
    if (key == kKeys.end()) return InvalidArgument("unknown environment variable '" + name + "'");
    result.values.push_back(TextValue{key, std::move(text), name});
  }
  return result;
}

void ResolveThreads(Settings& settings) {
  if (settings.threads == 0) settings.threads = std::max(1u, std::thread::hardware_concurrency());
}

// Resolves an unset ham_threshold (NaN while loading: no source set it) and checks that it is
// not above spam_threshold.
std::expected<void, Error> ResolveThresholds(Settings& settings) {
  if (std::isnan(settings.ham_threshold)) {
    settings.ham_threshold = std::min(kDefaultHamThreshold, settings.spam_threshold);
    return {};
  }
  if (settings.ham_threshold > settings.spam_threshold) {
    return InvalidArgument("ham_threshold (" + FormatDouble(settings.ham_threshold) +
                           ") must not be greater than spam_threshold (" +
                           FormatDouble(settings.spam_threshold) +
                           "): a message is ham at or below ham_threshold, spam above "
                           "spam_threshold, unsure between them");
  }
  return {};
}

std::expected<LoadResult, Error> Load(std::span<const char* const> argv,
                                      std::span<const std::string> environment) {
  auto command_line = ParseCommandLine(argv);
  if (!command_line) return std::unexpected(std::move(command_line.error()));

  LoadResult result;
  if (command_line->help || command_line->version) {
    result.action = command_line->help ? LoadResult::Action::kHelp : LoadResult::Action::kVersion;
    if (command_line->help) result.help_text = HelpText();
    ResolveThreads(result.settings);
    return result;
  }

  auto env = ParseEnvironment(environment);
  if (!env) return std::unexpected(std::move(env.error()));

  Settings& settings = result.settings;
  // Unset until a source sets it (ResolveThresholds); its key accepts finite numbers only.
  settings.ham_threshold = std::numeric_limits<double>::quiet_NaN();
  if (command_line->config) {
    if (command_line->config->empty()) return InvalidArgument("--config: empty file name");
    if (auto applied = ApplyTomlFile(settings, *command_line->config); !applied) {
      return std::unexpected(std::move(applied.error()));
    }
  } else if (env->config) {
    if (env->config->empty()) return InvalidArgument(std::string(kConfigEnv) + ": empty file name");
    if (auto applied = ApplyTomlFile(settings, *env->config); !applied) {
      return std::unexpected(std::move(applied.error()));
    }
  }
  for (const auto* values : {&env->values, &command_line->values}) {
    for (const TextValue& value : *values) {
      if (auto applied = ApplyText(settings, *value.key, value.text, value.where); !applied) {
        return std::unexpected(std::move(applied.error()));
      }
    }
  }
  ResolveThreads(settings);
  if (auto resolved = ResolveThresholds(settings); !resolved) {
    return std::unexpected(std::move(resolved.error()));
  }
  return result;
}

}  // namespace

std::expected<LoadResult, Error> LoadSettings(std::span<const char* const> argv,
                                              std::span<const std::string> environment) {
  try {
    return Load(argv, environment);
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kInternal, "out of memory while loading the settings");
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal,
                     std::string("unexpected error while loading the settings: ") + e.what());
  }
}

std::string HelpText() {
  const Settings defaults;
  std::string text =
      "Usage: nbspamd [--config FILE] [--KEY VALUE]...\n"
      "       nbspamd check [--repair] [--config FILE] [--KEY VALUE]...\n"
      "       nbspamd --help | --version\n"
      "\n"
      "nbspamd is a naive-Bayes spam-filter HTTP daemon.\n"
      "\n"
      "Settings come from, lowest precedence first: the built-in defaults, a TOML file (flat:\n"
      "top-level `key = value` lines only), NBSPAMD_<KEY> environment variables, and --<key>\n"
      "flags. A flag's value follows as the next argument or after '='. Booleans are true/false,\n"
      "1/0, yes/no or on/off.\n"
      "\n"
      "Flags:\n"
      "  --config FILE  (env NBSPAMD_CONFIG)\n"
      "      TOML settings file to read; none by default.\n"
      "  --help\n"
      "      Print this help and exit.\n"
      "  --version\n"
      "      Print the version and exit.\n"
      "\n"
      "Settings:\n";
  for (const Key& key : kKeys) {
    text += "  " + FlagName(key.name) + " " + std::string(key.metavar) + "\n";
    text += "      " + std::string(key.help) + "\n";
    text += "      Valid: " + Valid(key) + ".\n";
    text += "      Default: " + key.format(defaults) + "; environment " + EnvName(key.name) +
            "; TOML key " + std::string(key.name) + ".\n";
  }
  return text;
}

std::string FormatSettingsAsToml(const Settings& settings) {
  std::string text;
  for (const Key& key : kKeys) {
    text += std::string(key.name) + " = " + key.format(settings) + "\n";
  }
  return text;
}

}  // namespace nbspamd::config
