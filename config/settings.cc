#include "config/settings.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <string_view>
#include <thread>
#include <utility>

#include "config/command_line.h"
#include "config/environment_source.h"
#include "config/keys.h"
#include "config/toml_source.h"

namespace nbspamd::config {
namespace {

void ResolveThreads(Settings& settings) {
  if (settings.threads == 0) settings.threads = std::max(1u, std::thread::hardware_concurrency());
}

// Resolves an unset ham_threshold (NaN while loading: no source set it) and checks that it is
// not above spam_threshold.
std::expected<void, Error> ResolveThresholds(Settings& settings) {
  if (std::isnan(settings.ham_threshold)) {
    settings.ham_threshold = std::min(kDefaultHamThreshold, settings.spam_threshold);
    return {};
  }
  if (settings.ham_threshold > settings.spam_threshold) {
    return InvalidArgument("ham_threshold (" + FormatDouble(settings.ham_threshold) +
                           ") must not be greater than spam_threshold (" +
                           FormatDouble(settings.spam_threshold) +
                           "): a message is ham at or below ham_threshold, spam above "
                           "spam_threshold, unsure between them");
  }
  return {};
}

std::expected<void, Error> CheckAutolearn(const Settings& settings) {
  if (settings.autolearn_ham_confidence >= settings.autolearn_spam_confidence) {
    return InvalidArgument("autolearn_ham_confidence (" +
                           FormatDouble(settings.autolearn_ham_confidence) +
                           ") must be less than autolearn_spam_confidence (" +
                           FormatDouble(settings.autolearn_spam_confidence) + ")");
  }
  if (settings.autolearn && InClusterMode(settings)) {
    return InvalidArgument(
        "autolearn is not available in cluster mode (cluster_redis or cluster_sentinels is set)");
  }
  if (!settings.cluster_join_from.empty() && !InClusterMode(settings)) {
    return InvalidArgument(
        "cluster_join_from needs cluster mode (cluster_redis or cluster_sentinels): a daemon "
        "joins a cluster from a checkpoint");
  }

  if ((settings.token_expiry_days > 0 || settings.token_cap > 0) &&
      settings.ledger_retention_days == 0) {
    return InvalidArgument(
        "token_expiry_days and token_cap need ledger_retention_days: a token a ledger record "
        "holds never expires, and records are kept forever without it");
  }
  return {};
}

std::expected<LoadResult, Error> Load(std::span<const char* const> argv,
                                      std::span<const std::string> environment,
                                      const std::optional<std::string>& live_text) {
  auto command_line = ParseCommandLine(argv);
  if (!command_line) return std::unexpected(std::move(command_line.error()));

  LoadResult result;
  if (command_line->help || command_line->version) {
    result.action = command_line->help ? LoadResult::Action::kHelp : LoadResult::Action::kVersion;
    if (command_line->help) result.help_text = HelpText();
    ResolveThreads(result.settings);
    return result;
  }

  auto env = ParseEnvironment(environment);
  if (!env) return std::unexpected(std::move(env.error()));

  Settings& settings = result.settings;
  // Unset until a source sets it (ResolveThresholds); its key accepts finite numbers only.
  settings.ham_threshold = std::numeric_limits<double>::quiet_NaN();
  if (command_line->config) {
    if (command_line->config->empty()) return InvalidArgument("--config: empty file name");
    if (auto applied = ApplyTomlFile(settings, *command_line->config); !applied) {
      return std::unexpected(std::move(applied.error()));
    }
  } else if (env->config) {
    if (env->config->empty()) return InvalidArgument(std::string(kConfigEnv) + ": empty file name");
    if (auto applied = ApplyTomlFile(settings, *env->config); !applied) {
      return std::unexpected(std::move(applied.error()));
    }
  }
  for (const auto* values : {&env->values, &command_line->values}) {
    for (const TextValue& value : *values) {
      if (auto applied = ApplyText(settings, *value.key, value.text, value.where); !applied) {
        return std::unexpected(std::move(applied.error()));
      }
    }
  }
  // Last: what was set live (live_settings.h), read from the data folder the sources above name.
  const std::string live_path = LiveSettingsPath(settings.data_dir);
  const std::string live_where = "live settings " + live_path;
  if (live_text) {
    auto live = ParseLiveSettings(*live_text, live_where);
    if (!live) return std::unexpected(std::move(live.error()));
    result.live = std::move(*live);
  } else {
    auto live = ReadLiveSettings(live_path);
    if (!live) return std::unexpected(std::move(live.error()));
    result.live = std::move(*live);
  }
  if (!result.live.values.empty()) {
    if (auto applied =
            ApplyTomlText(settings, LiveSettingsText(result.live), live_where, live_path);
        !applied) {
      return std::unexpected(std::move(applied.error()));
    }
  }
  ResolveThreads(settings);
  if (auto resolved = ResolveThresholds(settings); !resolved) {
    return std::unexpected(std::move(resolved.error()));
  }
  if (auto checked = CheckAutolearn(settings); !checked) {
    return std::unexpected(std::move(checked.error()));
  }
  return result;
}

}  // namespace

std::expected<LoadResult, Error> LoadSettings(std::span<const char* const> argv,
                                              std::span<const std::string> environment,
                                              const std::optional<std::string>& live_text) {
  try {
    return Load(argv, environment, live_text);
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kInternal, "out of memory while loading the settings");
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal,
                     std::string("unexpected error while loading the settings: ") + e.what());
  }
}

std::expected<TrainGlobalFromUsers, std::string> ParseTrainGlobalFromUsers(std::string_view value) {
  if (value == "off") return TrainGlobalFromUsers{};
  if (value == "on") return TrainGlobalFromUsers{.on = true, .sources = {}};
  constexpr std::string_view kPrefix = "sources:";
  if (!value.starts_with(kPrefix)) return std::unexpected("off, on or sources:NAME,NAME...");
  TrainGlobalFromUsers policy{.on = true, .sources = {}};
  std::string_view rest = value.substr(kPrefix.size());
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    // As a token name (http_api/auth.h) or a spamd TELL grant's source.
    const bool valid = !name.empty() && name.size() <= 64 && std::ranges::all_of(name, [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.' || c == '-';
    });
    if (!valid) {
      return std::unexpected(
          "sources: needs token names (1-64 of A-Z a-z 0-9 _ . -) between commas");
    }
    policy.sources.emplace_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return policy;
}

std::string HelpText() {
  const Settings defaults;
  std::string text =
      "Usage: nbspamd [--config FILE] [--KEY VALUE]...\n"
      "       nbspamd check [--repair] [--config FILE] [--KEY VALUE]...\n"
      "       nbspamd dump [--output FILE] [--config FILE] [--KEY VALUE]...\n"
      "       nbspamd restore [--mode replace|append|subtract] [--config FILE] [--KEY VALUE]...\n"
      "                       FILE|-\n"
      "       nbspamd --help | --version\n"
      "\n"
      "nbspamd is a naive-Bayes spam-filter HTTP daemon.\n"
      "\n"
      "Settings come from, lowest precedence first: the built-in defaults, a TOML file (flat:\n"
      "top-level `key = value` lines only), NBSPAMD_<KEY> environment variables, and --<key>\n"
      "flags. A flag's value follows as the next argument or after '='. Booleans are true/false,\n"
      "1/0, yes/no or on/off.\n"
      "\n"
      "Flags:\n"
      "  --config FILE  (env NBSPAMD_CONFIG)\n"
      "      TOML settings file to read; none by default.\n"
      "  --help\n"
      "      Print this help and exit.\n"
      "  --version\n"
      "      Print the version and exit.\n"
      "\n"
      "Settings:\n";
  for (const Key& key : Keys()) {
    text += "  " + FlagName(key.name) + " " + std::string(key.metavar) + "\n";
    text += "      " + std::string(key.help) + "\n";
    text += "      Valid: " + Valid(key) + ".\n";
    text += "      Default: " + key.format(defaults) + "; environment " + EnvName(key.name) +
            "; TOML key " + std::string(key.name) + ".\n";
  }
  return text;
}

std::string FormatSettingsAsToml(const Settings& settings) {
  std::string text;
  for (const Key& key : Keys()) {
    text += std::string(key.name) + " = " + key.format(settings) + "\n";
  }
  return text;
}

}  // namespace nbspamd::config
