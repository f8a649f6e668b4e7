#include "server/settings_reload.h"

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <utility>

#include "common/log.h"
#include "config/keys.h"

namespace nbspamd::server {
namespace {

constexpr std::array<std::string_view, 4> kLiveKeys = {"log_level", "spam_threshold",
                                                       "ham_threshold", "train_rate_limit"};

bool IsLive(std::string_view key) { return std::ranges::find(kLiveKeys, key) != kLiveKeys.end(); }

}  // namespace

SettingsReload::SettingsReload(std::vector<std::string> argv, std::vector<std::string> environment,
                               config::Settings running, core::SpamFilter& filter,
                               std::function<void(double)> set_train_rate)
    : argv_(std::move(argv)),
      environment_(std::move(environment)),
      filter_(filter),
      set_train_rate_(std::move(set_train_rate)),
      running_(std::move(running)) {}

std::expected<ReloadReport, Error> SettingsReload::Reload() {
  std::lock_guard lock(mutex_);
  std::vector<const char*> argv;
  argv.reserve(argv_.size());
  for (const std::string& arg : argv_) argv.push_back(arg.c_str());
  auto loaded = config::LoadSettings(std::span<const char* const>(argv), environment_);
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  const config::Settings& next = loaded->settings;

  ReloadReport report;
  for (const config::Key& key : config::Keys()) {
    if (key.format(running_) == key.format(next)) continue;
    (IsLive(key.name) ? report.applied : report.restart_needed).emplace_back(key.name);
  }
  const bool thresholds_changed = next.spam_threshold != running_.spam_threshold ||
                                  next.ham_threshold != running_.ham_threshold;
  if (thresholds_changed) {
    // First: the one change that can be refused, so that a refusal changes nothing.
    if (auto set = filter_.SetThresholds({.spam = next.spam_threshold, .ham = next.ham_threshold});
        !set) {
      return std::unexpected(std::move(set.error()));
    }
    running_.spam_threshold = next.spam_threshold;
    running_.ham_threshold = next.ham_threshold;
  }
  if (next.log_level != running_.log_level) {
    SetLogLevel(ParseLogLevel(next.log_level).value_or(LogLevel::kInfo));  // Checked on load.
    running_.log_level = next.log_level;
  }
  if (next.train_rate_limit != running_.train_rate_limit) {
    set_train_rate_(next.train_rate_limit);
    running_.train_rate_limit = next.train_rate_limit;
  }
  return report;
}

std::string SettingsReload::Describe(const ReloadReport& report) {
  const auto join = [](const std::vector<std::string>& keys) {
    std::string text;
    for (const std::string& key : keys) text += (text.empty() ? "" : ", ") + key;
    return text.empty() ? std::string("none") : text;
  };
  return "settings reloaded: applied " + join(report.applied) +
         "; need a restart: " + join(report.restart_needed);
}

}  // namespace nbspamd::server
