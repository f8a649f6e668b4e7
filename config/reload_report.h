// ReloadReport: what a reload of the settings did (server/settings_reload.h), as the HTTP API
// (POST /admin/reload) and the log show it. A plain value.
#ifndef NBSPAMD_CONFIG_RELOAD_REPORT_H_
#define NBSPAMD_CONFIG_RELOAD_REPORT_H_

#include <string>
#include <vector>

namespace nbspamd::config {

struct ReloadReport {
  std::vector<std::string> applied;         // Keys whose new values are in force now.
  std::vector<std::string> restart_needed;  // Keys that changed but run as before until a restart.
};

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_RELOAD_REPORT_H_
