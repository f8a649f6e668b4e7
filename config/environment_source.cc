#include "config/environment_source.h"

#include <algorithm>
#include <utility>

namespace nbspamd::config {

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
    const std::span<const Key> keys = Keys();
    const auto key =
        std::ranges::find_if(keys, [&](const Key& k) { return EnvName(k.name) == name; });
    if (key == keys.end()) return InvalidArgument("unknown environment variable '" + name + "'");
    result.values.push_back(TextValue{&*key, std::move(text), name});
  }
  return result;
}

}  // namespace nbspamd::config
