// LiveSettings: the settings an administrator set while the daemon runs (POST /admin/reload with
// "set", docs/CONFIG.md "Reloading"), kept by the daemon in the data folder as a flat TOML file,
// live-settings.toml, that LoadSettings reads last: its values win over the file, the
// environment and the flags, until they are unset the same way. Only the keys of
// kLiveSettableKeys may be in it.
//
//   LiveSettings live = *ReadLiveSettings(LiveSettingsPath(settings.data_dir));
//   live.Set("spam_threshold", "0.9");
//   if (auto written = WriteLiveSettings(path, live); !written) ...   // atomic: all or nothing
//
// Plain values and functions; thread-safe (no shared state).
#ifndef NBSPAMD_CONFIG_LIVE_SETTINGS_H_
#define NBSPAMD_CONFIG_LIVE_SETTINGS_H_

#include <array>
#include <expected>
#include <map>
#include <string>
#include <string_view>

#include "common/error.h"
#include "config/reload_report.h"

namespace nbspamd::config {

inline constexpr std::string_view kLiveSettingsFile = "live-settings.toml";

// The keys that may be set live: those a reload applies, but the tokens (secrets stay in the
// administrator's files).
inline constexpr std::array<std::string_view, 9> kLiveSettableKeys = {"spam_threshold",
                                                                      "ham_threshold",
                                                                      "train_rate_limit",
                                                                      "log_level",
                                                                      "autolearn",
                                                                      "autolearn_spam_confidence",
                                                                      "autolearn_ham_confidence",
                                                                      "autolearn_max_class_ratio",
                                                                      "autolearn_queue_limit"};

[[nodiscard]] bool IsLiveSettable(std::string_view key);

// Each key set live, with its value as TOML ("0.9", "true", "\"debug\"").
struct LiveSettings {
  std::map<std::string, std::string, std::less<>> values;

  friend bool operator==(const LiveSettings&, const LiveSettings&) = default;
};

// "<data_dir>/live-settings.toml".
[[nodiscard]] std::string LiveSettingsPath(std::string_view data_dir);

// The file as TOML text, with a comment saying who writes it.
[[nodiscard]] std::string LiveSettingsText(const LiveSettings& live);

// The live settings of the text (what ReadLiveSettings reads). Errors: kInvalidArgument naming
// `where` for invalid TOML, an unknown key, a key that cannot be set live, or an invalid value.
[[nodiscard]] std::expected<LiveSettings, Error> ParseLiveSettings(std::string_view text,
                                                                   const std::string& where);

// `live` with `change` made: each key of change.set set to its value, each of change.unset
// removed. Errors: kInvalidArgument for a key that is unknown or cannot be set live (naming the
// ones that can), a value that is not valid for its key (as for its flag), or a key both set and
// unset.
[[nodiscard]] std::expected<LiveSettings, Error> ChangeLiveSettings(LiveSettings live,
                                                                    const LiveChange& change);

// The live settings kept at `path`; none when there is no file. Errors: as ParseLiveSettings,
// and kInvalidArgument when the file cannot be read.
[[nodiscard]] std::expected<LiveSettings, Error> ReadLiveSettings(const std::string& path);

// Replaces the file at `path` with `live` atomically (a temporary file beside it, synced, then
// renamed over it, and the folder synced); an empty `live` removes the file. Errors:
// kUnavailable naming the file and the system's reason (disk full, read-only, ...); the old
// file is then unchanged.
[[nodiscard]] std::expected<void, Error> WriteLiveSettings(const std::string& path,
                                                           const LiveSettings& live);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_LIVE_SETTINGS_H_
