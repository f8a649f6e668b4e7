// The command-line source of settings (internal to config/): --help, --version, --config FILE
// and one --<key> VALUE (or --<key>=VALUE) per key of the table (keys.h), long flags only.
// The values are checked later, by ApplyText, in the order of precedence. Thread-safe.
#ifndef NBSPAMD_CONFIG_COMMAND_LINE_H_
#define NBSPAMD_CONFIG_COMMAND_LINE_H_

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/keys.h"

namespace nbspamd::config {

// What the command line holds, before the values are validated.
struct CommandLine {
  bool help = false;
  bool version = false;
  std::optional<std::string> config;
  std::vector<TextValue> values;
};

// `argv` as main gets it (argv[0] is skipped). Errors: kInvalidArgument for an unknown flag, a
// missing or extra value, or a positional argument.
[[nodiscard]] std::expected<CommandLine, Error> ParseCommandLine(std::span<const char* const> argv);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_COMMAND_LINE_H_
