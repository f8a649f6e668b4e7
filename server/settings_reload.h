// SettingsReload: reads the settings again, as at start (the TOML file, the environment the
// daemon started with, its flags, and what was set live, config/live_settings.h), and applies the
// ones that can change while it serves:
//
//   log_level                      the log's level
//   spam_threshold, ham_threshold  the configured verdict thresholds (verdict_thresholds = fixed;
//                                  with feedback they bound the feedback's from start)
//   train_rate_limit               /train and /forget requests a second per source
//   auth_tokens, auth_tokens_file  the bearer tokens, also when only the file's contents changed
//   auth_classify                  whether the read endpoints need a token
//   autolearn, autolearn_*         guarded autolearn (not in cluster mode)
//   history_keep_*, history_clear_facts_days   how the scan history keeps the facts of the scans
//                                  recorded from then on, and when clear ones are hashed
//
// A reload may also set or unset settings live (LiveChange): they are checked with everything
// else, written to <data_dir>/live-settings.toml only when the whole reload can go ahead, and
// win over the other sources from then on, also after a restart.
//
// All or nothing: settings that do not load (a bad file, a bad value, a token file that cannot
// be read) leave everything as it runs and the error says what is wrong. Every other key that
// changed is named as needing a restart and keeps its running value. Connections are untouched.
// SIGHUP, `systemctl reload` and POST /admin/reload call it (docs/CONFIG.md, "Reloading").
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
#include "config/auth_tokens.h"
#include "config/reload_report.h"
#include "config/settings.h"
#include "core/spam_filter.h"

namespace nbspamd::server {

using config::LiveChange;
using config::ReloadReport;

// What a reload changes besides the filter: the HTTP router's training rate and access rules.
struct ReloadTargets {
  std::function<void(double per_second)> set_train_rate;
  std::function<void(std::vector<config::AuthToken> tokens, bool auth_classify)> set_access;
};

class SettingsReload {
 public:
  // `running`: the settings the daemon started with, and `running_tokens` the tokens it loaded
  // from them. `filter` must outlive this.
  SettingsReload(std::vector<std::string> argv, std::vector<std::string> environment,
                 config::Settings running, std::vector<config::AuthToken> running_tokens,
                 core::SpamFilter& filter, ReloadTargets targets);

  // Errors: kInvalidArgument, with LoadSettings' (or LoadAuthTokens', or ChangeLiveSettings')
  // message, when the settings do not load (nothing changes); kFailedPrecondition when a key
  // that reloads cannot take its new value (the thresholds in feedback mode, autolearn in
  // cluster mode): nothing changes either; kUnavailable when a live change cannot be written
  // (nothing changes).
  [[nodiscard]] std::expected<ReloadReport, Error> Reload(const LiveChange& change = {});

  // The report as one line for the log.
  [[nodiscard]] static std::string Describe(const ReloadReport& report);

 private:
  const std::vector<std::string> argv_;
  const std::vector<std::string> environment_;
  core::SpamFilter& filter_;
  const ReloadTargets targets_;
  std::mutex mutex_;                               // Serialises Reload; guards what follows.
  config::Settings running_;                       // As the last reload left them.
  std::vector<config::AuthToken> running_tokens_;  // Likewise.
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SETTINGS_RELOAD_H_
