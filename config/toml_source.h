// The TOML source of settings (internal to config/): a flat file of top-level `key = value`
// lines, read into Settings through the key table (keys.h). Thread-safe (no shared state).
#ifndef NBSPAMD_CONFIG_TOML_SOURCE_H_
#define NBSPAMD_CONFIG_TOML_SOURCE_H_

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "config/settings.h"

namespace nbspamd::config {

// Reads the flat TOML file at `path` into `settings`. Errors: kInvalidArgument naming the file
// (missing, a folder, unreadable, invalid TOML) or the first wrong key (unknown, a section, a
// wrong type or value), with its line.
[[nodiscard]] std::expected<void, Error> ApplyTomlFile(Settings& settings, const std::string& path);

// The contents of the file at `path`. Errors: kInvalidArgument naming it (missing, a folder,
// unreadable).
[[nodiscard]] std::expected<std::string, Error> ReadTomlText(const std::string& path);

// ApplyTomlFile's work on `text`: errors begin with `where`; `source` names the text in TOML's
// own messages (a path).
[[nodiscard]] std::expected<void, Error> ApplyTomlText(Settings& settings, std::string_view text,
                                                       const std::string& where,
                                                       const std::string& source);

// Each key of the flat TOML `text`, in the order of the text, with its value validated and
// formatted as the key table formats it ("0.9", "\"info\""). Errors: as ApplyTomlText.
[[nodiscard]] std::expected<std::vector<std::pair<std::string, std::string>>, Error> TomlValues(
    std::string_view text, const std::string& where);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_TOML_SOURCE_H_
