// The key table behind every source of settings (internal to config/): each key's name, kind,
// valid values, how it is stored in Settings and shown as TOML. The TOML file
// (toml_source.h), the environment (environment_source.h), the flags (command_line.h) and the
// help text all read it, so every key has one name, one validation and one help line.
//
//   const Key* key = FindKey("data_dir");
//   if (auto ok = ApplyText(settings, *key, "/srv/nbspamd", "--data-dir"); !ok) ...
//
// Pure; the table is constant, so everything here is thread-safe.
#ifndef NBSPAMD_CONFIG_KEYS_H_
#define NBSPAMD_CONFIG_KEYS_H_

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "common/error.h"
#include "config/settings.h"

namespace nbspamd::config {

inline constexpr std::string_view kEnvPrefix = "NBSPAMD_";
inline constexpr std::string_view kConfigEnv = "NBSPAMD_CONFIG";

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

// A key's value given on the command line or in the environment, with where it came from.
struct TextValue {
  const Key* key;
  std::string text;
  std::string where;  // "--threads" or "NBSPAMD_THREADS"
};

// Every key, in the order of the help text.
[[nodiscard]] std::span<const Key> Keys();
// The key named `name` (its TOML name); nullptr when there is none.
[[nodiscard]] const Key* FindKey(std::string_view name);
// "--data-dir" for "data_dir".
[[nodiscard]] std::string FlagName(std::string_view name);
// "NBSPAMD_DATA_DIR" for "data_dir".
[[nodiscard]] std::string EnvName(std::string_view name);
// The key's valid values in words, for errors and help.
[[nodiscard]] std::string Valid(const Key& key);
// `value` as the shortest text that reads back the same.
[[nodiscard]] std::string FormatDouble(double value);

[[nodiscard]] std::unexpected<Error> InvalidArgument(std::string message);
// "<where>: invalid value '<shown>' for '<key>': expected <valid><suffix>"
[[nodiscard]] std::unexpected<Error> InvalidValue(std::string_view where, std::string_view shown,
                                                  const Key& key, std::string_view suffix = {});

// Parses `text` (from the environment or a flag named `where`) as `key` and stores it.
// Errors: kInvalidArgument naming `where`, the key and its valid values.
[[nodiscard]] std::expected<void, Error> ApplyText(Settings& settings, const Key& key,
                                                   std::string_view text, std::string_view where);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_KEYS_H_
