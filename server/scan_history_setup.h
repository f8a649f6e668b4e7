// EnableScanHistory: opens the scan history the settings ask for (history, history_dir,
// history_max_*, history_keep_*) and gives it to the filter. Classification never depends on it:
// - a history that cannot be opened for now (kUnavailable: a full disk, a folder not mounted yet)
//   is logged as an error once, tried again every `retry` in the background, and given to the
//   filter when it opens (logged too); the daemon serves without one meanwhile;
// - one that cannot be opened for good (a corrupt database) is logged and left off.
#ifndef NBSPAMD_SERVER_SCAN_HISTORY_SETUP_H_
#define NBSPAMD_SERVER_SCAN_HISTORY_SETUP_H_

#include <chrono>
#include <memory>

#include "config/settings.h"
#include "core/periodic_task.h"
#include "core/spam_filter.h"
#include "history/fact_policy.h"

namespace nbspamd::server {

// The settings' history_keep_* as the history keeps facts (the settings checked them on load).
[[nodiscard]] history::FactPolicies FactPoliciesOf(const config::Settings& settings);

// Call once, before serving. Returns the task trying again (nullptr when none is needed): it
// stops when destroyed. REQUIRES: `filter` outlives the returned task.
[[nodiscard]] std::unique_ptr<core::PeriodicTask> EnableScanHistory(
    const config::Settings& settings, core::SpamFilter& filter,
    std::chrono::milliseconds retry = std::chrono::seconds(5));

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SCAN_HISTORY_SETUP_H_
