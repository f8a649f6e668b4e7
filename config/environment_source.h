// The environment source of settings (internal to config/): NBSPAMD_CONFIG names the TOML file,
// and NBSPAMD_<KEY> sets a key of the table (keys.h). Other variables are ignored; an unknown
// NBSPAMD_ one is an error. Thread-safe.
#ifndef NBSPAMD_CONFIG_ENVIRONMENT_SOURCE_H_
#define NBSPAMD_CONFIG_ENVIRONMENT_SOURCE_H_

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/keys.h"

namespace nbspamd::config {

// The NBSPAMD_* variables of `environment`.
struct Environment {
  std::optional<std::string> config;
  std::vector<TextValue> values;
};

// `environment` holds "NAME=VALUE" entries. Errors: kInvalidArgument for an unknown NBSPAMD_
// variable.
[[nodiscard]] std::expected<Environment, Error> ParseEnvironment(
    std::span<const std::string> environment);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_ENVIRONMENT_SOURCE_H_
