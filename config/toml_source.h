// The TOML source of settings (internal to config/): a flat file of top-level `key = value`
// lines, read into Settings through the key table (keys.h). Thread-safe (no shared state).
#ifndef NBSPAMD_CONFIG_TOML_SOURCE_H_
#define NBSPAMD_CONFIG_TOML_SOURCE_H_

#include <expected>
#include <string>

#include "common/error.h"
#include "config/settings.h"

namespace nbspamd::config {

// Reads the flat TOML file at `path` into `settings`. Errors: kInvalidArgument naming the file
// (missing, a folder, unreadable, invalid TOML) or the first wrong key (unknown, a section, a
// wrong type or value), with its line.
[[nodiscard]] std::expected<void, Error> ApplyTomlFile(Settings& settings, const std::string& path);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_TOML_SOURCE_H_
