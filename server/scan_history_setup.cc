#include "server/scan_history_setup.h"

#include <atomic>
#include <expected>
#include <filesystem>
#include <memory>
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

// Opens the history and gives it to the filter. Returns the error when it cannot be opened.
// RocksDB's lines are logged unless `quiet` (an attempt after the first failed one, which
// logged them); once the history opens they always are.
std::expected<void, Error> OpenInto(const config::Settings& settings, const std::string& path,
                                    core::SpamFilter& filter, bool quiet) {
  auto muted = std::make_shared<std::atomic<bool>>(quiet);
  auto history = history::ScanHistory::Open(
      {.path = path,
       .max_scans = settings.history_max_scans,
       .max_age_ms = static_cast<std::int64_t>(settings.history_max_age_days) * 86'400'000,
       .clear_facts_ms = static_cast<std::int64_t>(settings.history_clear_facts_days) * 86'400'000,
       .log = [muted](std::string_view line) {
         if (!muted->load(std::memory_order_relaxed)) {
           LogWarning(line, {{"from", "rocksdb_history"}});
         }
       }});
  if (!history) return std::unexpected(std::move(history.error()));
  muted->store(false, std::memory_order_relaxed);
  const history::FactPolicies facts = FactPoliciesOf(settings);
  const std::uint64_t kept = (*history)->Figures().kept;
  filter.EnableHistory(std::move(*history),
                       {.facts = facts,
                        .explain = settings.history_explain,
                        .id_salt = static_cast<std::uint32_t>(std::random_device{}())});
  LogInfo("scan history in " + path + ": " + std::to_string(kept) + " scans, at most " +
          std::to_string(settings.history_max_scans) + " of " +
          std::to_string(settings.history_max_age_days) + " days");
  return {};
}

}  // namespace

history::FactPolicies FactPoliciesOf(const config::Settings& settings) {
  return {.message_id = PolicyOf(settings.history_keep_message_id),
          .from_domain = PolicyOf(settings.history_keep_from_domain),
          .subject = PolicyOf(settings.history_keep_subject),
          .client = PolicyOf(settings.history_keep_client),
          .recipients = PolicyOf(settings.history_keep_recipients)};
}

std::unique_ptr<core::PeriodicTask> EnableScanHistory(const config::Settings& settings,
                                                      core::SpamFilter& filter,
                                                      std::chrono::milliseconds retry) {
  if (!settings.history) return nullptr;
  const std::string path = settings.history_dir.empty()
                               ? (std::filesystem::path(settings.data_dir) / "history").string()
                               : settings.history_dir;
  auto opened = OpenInto(settings, path, filter, /*quiet=*/false);
  if (opened) return nullptr;
  if (opened.error().code != ErrorCode::kUnavailable) {
    LogError("the scan history is off: " + opened.error().message);
    return nullptr;
  }
  const std::string every = retry.count() % 1000 == 0 ? std::to_string(retry.count() / 1000) + " s"
                                                      : std::to_string(retry.count()) + " ms";
  LogError("the scan history is off until its folder opens: " + opened.error().message +
           "; trying again every " + every);
  // The task's thread alone reads and writes `open`.
  return std::make_unique<core::PeriodicTask>(
      retry, [settings, &filter, path, open = false]() mutable {
        if (open) return;
        open = OpenInto(settings, path, filter, /*quiet=*/true).has_value();
      });
}

}  // namespace nbspamd::server
