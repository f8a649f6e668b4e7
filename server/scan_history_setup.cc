#include "server/scan_history_setup.h"

#include <filesystem>
#include <random>
#include <string>

#include "common/log.h"
#include "history/fact_policy.h"
#include "history/scan_history.h"

namespace nbspamd::server {
namespace {

// The policies were checked when the settings were read.
history::FactPolicy PolicyOf(const std::string& text) {
  return history::ParseFactPolicy(text).value_or(history::FactPolicy::kOff);
}

}  // namespace

void EnableScanHistory(const config::Settings& settings, core::SpamFilter& filter) {
  if (!settings.history) return;
  const std::string path = settings.history_dir.empty()
                               ? (std::filesystem::path(settings.data_dir) / "history").string()
                               : settings.history_dir;
  auto history = history::ScanHistory::Open(
      {.path = path,
       .max_scans = settings.history_max_scans,
       .max_age_ms = static_cast<std::int64_t>(settings.history_max_age_days) * 86'400'000,
       .log = [](std::string_view line) {
         LogWarning(line, {{"from", "rocksdb_history"}});
       }});
  if (!history) {
    LogError("the scan history is off: " + history.error().message);
    return;
  }
  const history::FactPolicies facts{.message_id = PolicyOf(settings.history_keep_message_id),
                                    .from_domain = PolicyOf(settings.history_keep_from_domain),
                                    .subject = PolicyOf(settings.history_keep_subject),
                                    .client = PolicyOf(settings.history_keep_client),
                                    .recipients = PolicyOf(settings.history_keep_recipients)};
  const std::uint64_t kept = (*history)->Figures().kept;
  filter.EnableHistory(
      std::move(*history),
      {.facts = facts, .id_salt = static_cast<std::uint32_t>(std::random_device{}())});
  LogInfo("scan history in " + path + ": " + std::to_string(kept) + " scans, at most " +
          std::to_string(settings.history_max_scans) + " of " +
          std::to_string(settings.history_max_age_days) + " days");
}

}  // namespace nbspamd::server
