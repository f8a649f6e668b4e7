// EnableScanHistory: opens the scan history the settings ask for (history, history_dir,
// history_max_*, history_keep_*) and gives it to the filter. A history that cannot be opened is
// logged as an error and the daemon runs without one: classification never depends on it.
#ifndef NBSPAMD_SERVER_SCAN_HISTORY_SETUP_H_
#define NBSPAMD_SERVER_SCAN_HISTORY_SETUP_H_

#include "config/settings.h"
#include "core/spam_filter.h"

namespace nbspamd::server {

// Call once, before serving.
void EnableScanHistory(const config::Settings& settings, core::SpamFilter& filter);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SCAN_HISTORY_SETUP_H_
