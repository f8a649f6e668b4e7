#include "server/settings_reload.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "common/log.h"
#include "config/keys.h"
#include "config/live_settings.h"
#include "history/fact_policy.h"
#include "server/model_commands.h"
#include "server/scan_history_setup.h"

namespace nbspamd::server {
namespace {

constexpr std::array<std::string_view, 12> kLiveKeys = {"log_level",
                                                        "spam_threshold",
                                                        "ham_threshold",
                                                        "train_rate_limit",
                                                        "auth_tokens",
                                                        "auth_tokens_file",
                                                        "auth_classify",
                                                        "autolearn",
                                                        "autolearn_spam_confidence",
                                                        "autolearn_ham_confidence",
                                                        "autolearn_max_class_ratio",
                                                        "autolearn_queue_limit"};

// How the scan history keeps the facts of the scans recorded from the reload on.
constexpr std::array<std::string_view, 6> kHistoryLiveKeys = {
    "history_keep_message_id", "history_keep_from_domain", "history_keep_subject",
    "history_keep_client",     "history_keep_recipients",  "history_clear_facts_days"};

bool IsLive(std::string_view key) {
  return std::ranges::find(kLiveKeys, key) != kLiveKeys.end() ||
         std::ranges::find(kHistoryLiveKeys, key) != kHistoryLiveKeys.end();
}

bool SameAutolearn(const config::Settings& a, const config::Settings& b) {
  return a.autolearn == b.autolearn && a.autolearn_spam_confidence == b.autolearn_spam_confidence &&
         a.autolearn_ham_confidence == b.autolearn_ham_confidence &&
         a.autolearn_max_class_ratio == b.autolearn_max_class_ratio &&
         a.autolearn_queue_limit == b.autolearn_queue_limit;
}

bool SameTokens(const std::vector<config::AuthToken>& a, const std::vector<config::AuthToken>& b) {
  return std::ranges::equal(a, b, [](const config::AuthToken& x, const config::AuthToken& y) {
    return x.name == y.name && x.secret == y.secret;
  });
}

}  // namespace

SettingsReload::SettingsReload(std::vector<std::string> argv, std::vector<std::string> environment,
                               config::Settings running,
                               std::vector<config::AuthToken> running_tokens,
                               core::SpamFilter& filter, ReloadTargets targets)
    : argv_(std::move(argv)),
      environment_(std::move(environment)),
      filter_(filter),
      targets_(std::move(targets)),
      running_(std::move(running)),
      running_tokens_(std::move(running_tokens)) {}

std::expected<ReloadReport, Error> SettingsReload::Reload(const LiveChange& change) {
  std::lock_guard lock(mutex_);
  // A live change is checked with everything else and written only once all of it can go ahead.
  const std::string live_path = config::LiveSettingsPath(running_.data_dir);
  std::optional<config::LiveSettings> live_next;
  std::optional<std::string> live_text;
  if (!change.empty()) {
    auto live = config::ReadLiveSettings(live_path);
    if (!live) return std::unexpected(std::move(live.error()));
    auto changed = config::ChangeLiveSettings(std::move(*live), change);
    if (!changed) return std::unexpected(std::move(changed.error()));
    live_text = config::LiveSettingsText(*changed);
    live_next = std::move(*changed);
  }
  std::vector<const char*> argv;
  argv.reserve(argv_.size());
  for (const std::string& arg : argv_) argv.push_back(arg.c_str());
  auto loaded = config::LoadSettings(std::span<const char* const>(argv), environment_, live_text);
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  const config::Settings& next = loaded->settings;
  auto tokens = config::LoadAuthTokens(next);
  if (!tokens) return std::unexpected(std::move(tokens.error()));

  ReloadReport report;
  for (const config::Key& key : config::Keys()) {
    if (key.format(running_) == key.format(next)) continue;
    (IsLive(key.name) ? report.applied : report.restart_needed).emplace_back(key.name);
  }
  const bool tokens_changed = !SameTokens(*tokens, running_tokens_);
  if (tokens_changed &&
      std::ranges::find(report.applied, "auth_tokens_file") == report.applied.end() &&
      std::ranges::find(report.applied, "auth_tokens") == report.applied.end()) {
    // The same settings, another token file's contents.
    report.applied.emplace_back(next.auth_tokens_file.empty() ? "auth_tokens" : "auth_tokens_file");
  }
  for (const auto& [key, value] : loaded->live.values) report.live.emplace_back(key, value);

  // First what can be refused, so that a refusal changes nothing.
  const bool thresholds_changed = next.spam_threshold != running_.spam_threshold ||
                                  next.ham_threshold != running_.ham_threshold;
  if (thresholds_changed && filter_.options().thresholds_from_feedback) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "with verdict_thresholds = feedback the thresholds bound the feedback's from "
                     "start: a restart changes them");
  }
  const bool autolearn_changed = !SameAutolearn(next, running_);
  if (autolearn_changed && next.autolearn && filter_.Cluster()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "autolearn is not available in cluster mode: set autolearn = false");
  }
  if (live_next) {
    if (auto written = config::WriteLiveSettings(live_path, *live_next); !written) {
      return std::unexpected(std::move(written.error()));
    }
  }

  if (thresholds_changed) {
    if (auto set = filter_.SetThresholds({.spam = next.spam_threshold, .ham = next.ham_threshold});
        !set) {
      LogError("reload: the thresholds were not applied: " + set.error().message);
    }
    running_.spam_threshold = next.spam_threshold;
    running_.ham_threshold = next.ham_threshold;
  }
  if (autolearn_changed) {
    if (auto set = filter_.SetAutolearn(AutolearnOptionsOf(next)); !set) {
      LogError("reload: autolearn was not applied: " + set.error().message);
    }
    running_.autolearn = next.autolearn;
    running_.autolearn_spam_confidence = next.autolearn_spam_confidence;
    running_.autolearn_ham_confidence = next.autolearn_ham_confidence;
    running_.autolearn_max_class_ratio = next.autolearn_max_class_ratio;
    running_.autolearn_queue_limit = next.autolearn_queue_limit;
  }
  if (next.log_level != running_.log_level) {
    SetLogLevel(ParseLogLevel(next.log_level).value_or(LogLevel::kInfo));  // Checked on load.
    running_.log_level = next.log_level;
  }
  if (next.train_rate_limit != running_.train_rate_limit) {
    if (targets_.set_train_rate) targets_.set_train_rate(next.train_rate_limit);
    running_.train_rate_limit = next.train_rate_limit;
  }
  if (tokens_changed || next.auth_classify != running_.auth_classify ||
      next.auth_tokens != running_.auth_tokens ||
      next.auth_tokens_file != running_.auth_tokens_file) {
    if (targets_.set_access) targets_.set_access(*tokens, next.auth_classify);
    running_tokens_ = std::move(*tokens);
    running_.auth_tokens = next.auth_tokens;
    running_.auth_tokens_file = next.auth_tokens_file;
    running_.auth_classify = next.auth_classify;
  }
  if (FactPoliciesOf(next) != FactPoliciesOf(running_) ||
      next.history_clear_facts_days != running_.history_clear_facts_days) {
    filter_.SetHistoryFacts(FactPoliciesOf(next),
                            static_cast<std::int64_t>(next.history_clear_facts_days) * 86'400'000);
    running_.history_keep_message_id = next.history_keep_message_id;
    running_.history_keep_from_domain = next.history_keep_from_domain;
    running_.history_keep_subject = next.history_keep_subject;
    running_.history_keep_client = next.history_keep_client;
    running_.history_keep_recipients = next.history_keep_recipients;
    running_.history_clear_facts_days = next.history_clear_facts_days;
  }
  return report;
}

std::string SettingsReload::Describe(const ReloadReport& report) {
  const auto join = [](const std::vector<std::string>& keys) {
    std::string text;
    for (const std::string& key : keys) text += (text.empty() ? "" : ", ") + key;
    return text.empty() ? std::string("none") : text;
  };
  std::vector<std::string> live;
  for (const auto& [key, value] : report.live) live.push_back(key + " = " + value);
  return "settings reloaded: applied " + join(report.applied) +
         "; need a restart: " + join(report.restart_needed) + "; set live: " + join(live);
}

}  // namespace nbspamd::server
