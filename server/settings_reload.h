// SettingsReload: reads the settings again, as at start (the TOML file, the environment the
// daemon started with, its flags), and applies the ones that can change while it serves:
//
//   log_level                      the log's level
//   spam_threshold, ham_threshold  the configured verdict thresholds (verdict_thresholds = fixed;
//                                  with feedback they bound the feedback's from start)
//   train_rate_limit               /train and /forget requests a second per source
//
// All or nothing: settings that do not load (a bad file, a bad value) leave everything as it runs
// and the error says what is wrong. Every other key that changed is named as needing a restart and
// keeps its running value. Connections are untouched. SIGHUP, `systemctl reload` and
// POST /admin/reload call it (docs/CONFIG.md, "Reloading").
//
// Thread safety: Reload from any thread; calls are serialised.
#ifndef NBSPAMD_SERVER_SETTINGS_RELOAD_H_
#define NBSPAMD_SERVER_SETTINGS_RELOAD_H_

#include <expected>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/reload_report.h"
#include "config/settings.h"
#include "core/spam_filter.h"

namespace nbspamd::server {

using config::ReloadReport;

class SettingsReload {
 public:
  // `running`: the settings the daemon started with. `set_train_rate`: applies a new
  // train_rate_limit (the HTTP router's). `filter` must outlive this.
  SettingsReload(std::vector<std::string> argv, std::vector<std::string> environment,
                 config::Settings running, core::SpamFilter& filter,
                 std::function<void(double)> set_train_rate);

  // Errors: kInvalidArgument, with LoadSettings' message, when the settings do not load (nothing
  // changes); kFailedPrecondition when a key that reloads cannot take its new value (the
  // thresholds in feedback mode): nothing changes either.
  [[nodiscard]] std::expected<ReloadReport, Error> Reload();

  // The report as one line for the log.
  [[nodiscard]] static std::string Describe(const ReloadReport& report);

 private:
  const std::vector<std::string> argv_;
  const std::vector<std::string> environment_;
  core::SpamFilter& filter_;
  const std::function<void(double)> set_train_rate_;
  std::mutex mutex_;          // Serialises Reload; guards running_.
  config::Settings running_;  // As the last reload left them.
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SETTINGS_RELOAD_H_
