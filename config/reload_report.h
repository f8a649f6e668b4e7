// ReloadReport: what a reload of the settings did (server/settings_reload.h), as the HTTP API
// (POST /admin/reload) and the log show it, and LiveChange, what a reload is asked to set live
// on the way (live_settings.h). Plain values.
#ifndef NBSPAMD_CONFIG_RELOAD_REPORT_H_
#define NBSPAMD_CONFIG_RELOAD_REPORT_H_

#include <string>
#include <utility>
#include <vector>

namespace nbspamd::config {

struct ReloadReport {
  std::vector<std::string> applied;         // Keys whose new values are in force now.
  std::vector<std::string> restart_needed;  // Keys that changed but run as before until a restart.
  // The settings set live after the reload, each key with its value as TOML ("0.9").
  std::vector<std::pair<std::string, std::string>> live;
};

// Keys to set live, each with its value as a flag takes it ("0.9", "true", "debug"), and keys
// to unset (back to the file's, the environment's, the flags' or the default value).
struct LiveChange {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> unset;

  [[nodiscard]] bool empty() const { return set.empty() && unset.empty(); }
};

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_RELOAD_REPORT_H_
