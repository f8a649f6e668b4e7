#include "config/live_settings.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "common/file_replace.h"
#include "config/keys.h"
#include "config/toml_source.h"

namespace nbspamd::config {

bool IsLiveSettable(std::string_view key) {
  return std::ranges::find(kLiveSettableKeys, key) != kLiveSettableKeys.end();
}

std::string LiveSettingsPath(std::string_view data_dir) {
  return (std::filesystem::path(data_dir) / kLiveSettingsFile).string();
}

std::string LiveSettingsText(const LiveSettings& live) {
  std::string text =
      "# Settings set while nbspamd runs (POST /admin/reload with \"set\", or the console).\n"
      "# Written by the daemon; they win over the config file, the environment and the flags.\n"
      "# Unset them the same way, or remove a line and reload.\n";
  for (const auto& [key, value] : live.values) text += key + " = " + value + "\n";
  return text;
}

std::expected<LiveSettings, Error> ParseLiveSettings(std::string_view text,
                                                     const std::string& where) {
  auto values = TomlValues(text, where);
  if (!values) return std::unexpected(std::move(values.error()));
  LiveSettings live;
  for (auto& [key, value] : *values) {
    if (!IsLiveSettable(key)) {
      return InvalidArgument(where + ": '" + key + "' cannot be set live");
    }
    live.values.insert_or_assign(std::move(key), std::move(value));
  }
  return live;
}

std::expected<LiveSettings, Error> ChangeLiveSettings(LiveSettings live, const LiveChange& change) {
  const auto settable = [] {
    std::string names;
    for (std::string_view key : kLiveSettableKeys) {
      names += (names.empty() ? "" : ", ") + std::string(key);
    }
    return names;
  };
  const auto check = [&](const std::string& key) -> std::expected<const Key*, Error> {
    const Key* found = FindKey(key);
    if (found == nullptr) return InvalidArgument("unknown setting '" + key + "'");
    if (!IsLiveSettable(key)) {
      return InvalidArgument("'" + key + "' cannot be set live; these can: " + settable());
    }
    return found;
  };
  for (const std::string& key : change.unset) {
    if (auto known = check(key); !known) return std::unexpected(std::move(known.error()));
    if (std::ranges::any_of(change.set, [&](const auto& set) { return set.first == key; })) {
      return InvalidArgument("'" + key + "' is both set and unset");
    }
    live.values.erase(key);
  }
  for (const auto& [key, text] : change.set) {
    auto known = check(key);
    if (!known) return std::unexpected(std::move(known.error()));
    Settings scratch;
    if (auto applied = ApplyText(scratch, **known, text, "set"); !applied) {
      return std::unexpected(std::move(applied.error()));
    }
    live.values.insert_or_assign(key, (*known)->format(scratch));
  }
  return live;
}

std::expected<LiveSettings, Error> ReadLiveSettings(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return LiveSettings{};
  auto text = ReadTomlText(path);
  if (!text) return std::unexpected(std::move(text.error()));
  return ParseLiveSettings(*text, "live settings " + path);
}

std::expected<void, Error> WriteLiveSettings(const std::string& path, const LiveSettings& live) {
  if (live.values.empty()) return RemoveFile(path);
  return ReplaceFile(path, LiveSettingsText(live));
}

}  // namespace nbspamd::config
