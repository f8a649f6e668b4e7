// nbspamd: the spam-filtering HTTP daemon. Reads its settings (defaults, TOML file, NBSPAMD_*
// environment, flags), opens the model, serves until SIGTERM or SIGINT, then closes the model.
//
//   nbspamd [FLAGS]                    serve
//   nbspamd check [--repair] [FLAGS]   verify the model in the data folder offline (and repair)
//   nbspamd dump [--output FILE] [FLAGS]               the model as text (a dump)
//   nbspamd restore [--mode MODE] [FLAGS] FILE|-       a dump into the data folder
//
// Exit status: 0 after a clean shutdown, 1 for a start-up error (bad settings, data folder,
// listen address, or joining the cluster), 2 for a bad command line, 3 after stopping to rejoin
// the cluster (found behind the trimmed stream while serving, with cluster_join_from); the
// offline commands' in server/model_commands.h.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/version.h"
#include "config/auth_tokens.h"
#include "config/settings.h"
#include "core/activity_file.h"
#include "core/idle_users.h"
#include "core/model_expiry.h"
#include "core/spam_filter.h"
#include "http_server/server.h"
#include "replication/cluster.h"
#include "server/activity_keeper.h"
#include "server/cluster_join.h"
#include "server/cluster_options.h"
#include "server/http_front_end.h"
#include "server/milter_front_end.h"
#include "server/model_commands.h"
#include "server/model_expiry_setup.h"
#include "server/scan_history_setup.h"
#include "server/settings_reload.h"
#include "server/spamd_front_end.h"
#include "storage/rocksdb_store.h"
#include "tokenizer/glib_slices.h"

namespace nbspamd {
namespace {

// The status of a daemon that stopped to rejoin its cluster (found behind the trimmed stream
// while serving, with cluster_join_from): not 0, so that a supervisor starts it again.
constexpr int kExitRejoin = 3;
// The status Run returns after serving: 0, or kExitRejoin.
std::atomic<int> exit_status = 0;

// True for addresses only this machine reaches.
bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

int Run(int argc, char** argv) {
  if (argc > 1) {
    const std::string_view command(argv[1]);
    if (command == "check") return server::CheckCommand(argc, argv);
    if (command == "dump") return server::DumpCommand(argc, argv);
    if (command == "restore") return server::RestoreCommand(argc, argv);
  }
  const std::vector<std::string> environment = server::ProcessEnvironment();
  auto loaded = config::LoadSettings(std::span<const char* const>(argv, argc), environment);
  if (!loaded) {
    std::fprintf(stderr, "nbspamd: %s\nTry 'nbspamd --help'.\n", loaded.error().message.c_str());
    return 2;
  }
  if (loaded->action == config::LoadResult::Action::kHelp) {
    std::fputs(loaded->help_text.c_str(), stdout);
    return 0;
  }
  if (loaded->action == config::LoadResult::Action::kVersion) {
    std::printf("nbspamd %s\n", kVersion);
    return 0;
  }
  const config::Settings& settings = loaded->settings;
  // LoadSettings accepted only valid names.
  ConfigureLog(ParseLogLevel(settings.log_level).value_or(LogLevel::kInfo),
               ParseLogFormat(settings.log_format).value_or(LogFormat::kLogfmt));
  auto tokens = config::LoadAuthTokens(settings);
  if (!tokens) {
    std::fprintf(stderr, "nbspamd: %s\n", tokens.error().message.c_str());
    return 2;
  }
  if (tokens->empty() && !IsLoopback(settings.listen_host)) {
    LogWarning("WARNING: listening on " + settings.listen_host +
               " with no auth_tokens: anyone who reaches this port can train and "
               "forget, and so poison the model. Configure auth_tokens or bind loopback.");
  }

  // The signals the server takes go to its I/O threads only (Server::Run unblocks them there):
  // blocked here, before the model's threads (the training writer, RocksDB's) start, so those
  // inherit the block. A signal that comes before Run waits, pending, until Run takes it; the
  // default action of SIGHUP, SIGUSR1 or SIGUSR2 (ending the process) never applies.
  const sigset_t served = http_server::ServedSignals();
  pthread_sigmask(SIG_BLOCK, &served, nullptr);

  // Declared before the model, so destroyed after it is closed: from Server::Create on, the server
  // handles SIGTERM and SIGINT (a further one only ends the drain early), so no signal can cut
  // the closing of the model short.
  std::unique_ptr<http_server::Server> server;
  // The milter and spamd front ends, stopped after the HTTP server, before the model closes.
  server::MilterFrontEnd milter_front;
  server::SpamdFrontEnd spamd_front;
  // With cluster_join_from: no model yet, or one the stream was trimmed past, is first replaced
  // by a peer's checkpoint (cluster_join.h).
  if (auto joined = server::JoinClusterIfNeeded(settings); !joined) {
    std::fprintf(stderr, "nbspamd: %s\n", joined.error().message.c_str());
    return 1;
  }
  storage::RocksdbStoreOptions store_options;
  store_options.log = [](std::string_view line) { LogWarning(line, {{"from", "rocksdb"}}); };
  store_options.user_token_limit = settings.user_token_limit;
  store_options.user_cache_bytes = settings.user_cache_bytes;
  auto store = storage::RocksdbStore::Open(settings.data_dir, store_options);
  if (!store) {
    std::fprintf(stderr, "nbspamd: %s\n", store.error().message.c_str());
    return 1;
  }
  core::SpamFilter filter(std::move(*store), server::FilterOptionsOf(settings));
  // Stopped before the filter goes (declared after it), as the tasks below.
  const std::unique_ptr<core::PeriodicTask> history_retry =
      server::EnableScanHistory(settings, filter);
  std::optional<server::ActivityKeeper> activity;
  activity.emplace((std::filesystem::path(settings.data_dir) / core::kActivityFile).string(),
                   filter);
  std::optional<core::IdleUserSweep> idle_users;
  if (settings.user_idle_days > 0) {
    idle_users.emplace(filter, std::chrono::days(settings.user_idle_days), std::chrono::hours(1));
  }
  const core::ExpiryPolicy expiry_policy = server::ExpiryPolicyOf(settings);
  std::optional<core::ModelExpirySweep> model_expiry;
  if (expiry_policy.enabled()) model_expiry.emplace(filter, expiry_policy, std::chrono::hours(1));

  // Reads the settings again on SIGHUP and POST /admin/reload (settings_reload.h); made once the
  // server exists (it applies train_rate_limit to the server's router), before either can call.
  std::optional<server::SettingsReload> reload;
  const auto reload_now =
      [&reload](const config::LiveChange& change) -> std::expected<config::ReloadReport, Error> {
    auto report = reload->Reload(change);
    if (report) {
      LogInfo(server::SettingsReload::Describe(*report));
    } else {
      LogError("settings not reloaded, the running ones stay: " + report.error().message);
    }
    return report;
  };
  const std::vector<config::AuthToken> running_tokens = *tokens;
  auto server_options = server::HttpServerOptions(
      settings, std::move(*tokens),
      [&milter_front, &spamd_front]() -> std::string {
        return milter_front.Metrics() + spamd_front.Metrics();
      },
      [&milter_front, &spamd_front] {
        milter_front.StopAccepting();
        spamd_front.StopAccepting();
      });
  if (!server_options) {
    std::fprintf(stderr, "nbspamd: %s\n", server_options.error().message.c_str());
    return 1;
  }
  server_options->router.reload = reload_now;
  server_options->on_reload = [reload_now] { (void)reload_now({}); };
  auto created = http_server::Server::Create(filter, *server_options);
  if (!created) {
    std::fprintf(stderr, "nbspamd: %s\n", created.error().message.c_str());
    return 1;
  }
  server = std::move(*created);
  reload.emplace(
      std::vector<std::string>(argv, argv + argc), environment, settings, running_tokens, filter,
      server::ReloadTargets{
          .set_train_rate = [router = &server->router()](
                                double per_second) { router->SetTrainRateLimit(per_second); },
          .set_access =
              [router = &server->router()](std::vector<config::AuthToken> tokens,
                                           bool auth_classify) {
                router->SetAccess({.authenticator = http_api::Authenticator(std::move(tokens)),
                                   .auth_classify = auth_classify});
              }});
  if (config::InClusterMode(settings)) {
    auto options = server::ClusterOptionsOf(settings);
    if (!options) {
      std::fprintf(stderr, "nbspamd: %s\n", options.error().message.c_str());
      return 1;
    }
    replication::ClusterOptions cluster = std::move(*options);
    if (!settings.cluster_sentinels.empty() && !settings.cluster_redis.empty()) {
      LogWarning("cluster_redis is unused: the primary is the one cluster_sentinels name");
    }
    if (!settings.cluster_join_from.empty()) {
      // Behind the trimmed stream while serving: stop, with a status that asks a supervisor
      // (the unit's Restart=on-failure, a container's restart policy) to start the daemon
      // again, which then joins from a peer (cluster_join.h).
      cluster.gap_found = [] {
        LogError(
            "cluster: stopping so that this daemon rejoins the cluster from a peer's checkpoint "
            "at its next start (cluster_join_from); exit status " +
            std::to_string(kExitRejoin));
        exit_status.store(kExitRejoin);
        ::kill(::getpid(), SIGTERM);
      };
    }
    if (cluster.name.empty()) {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "nbspamd");
      cluster.name = std::string(host) + ":" + std::to_string(server->LocalEndpoint().port());
    }
    if (auto joined = replication::EnableCluster(filter, std::move(cluster)); !joined) {
      std::fprintf(stderr, "nbspamd: %s\n", joined.error().message.c_str());
      return 1;
    }
    LogInfo(
        "cluster mode: training through the Redis stream '" + settings.cluster_stream + "' at " +
        (settings.cluster_sentinels.empty()
             ? settings.cluster_redis
             : "the primary '" + settings.cluster_sentinel_master + "' of the sentinels " +
                   settings.cluster_sentinels) +
        ", trains acknowledged on " + std::to_string(config::ClusterMinReplicas(settings)) +
        " replica(s), read from " +
        (settings.cluster_read_from == "replica" ? "a replica when there is one" : "the primary") +
        ", from position " +
        (filter.Cluster()->applied.empty() ? std::string("0-0") : filter.Cluster()->applied));
  }
  if (!loaded->live.values.empty()) {
    std::string live;
    for (const auto& [key, value] : loaded->live.values) {
      live += (live.empty() ? "" : ", ") + key + " = " + value;
    }
    LogInfo("settings set live (" + config::LiveSettingsPath(settings.data_dir) +
            ") win over the others: " + live);
  }
  // Where GMime's small objects come from (tokenizer/glib_slices.h): malloc unless G_SLICE said
  // otherwise when the process started.
  LogInfo(tokenizer::GSliceAllocatesWithMalloc()
              ? "GMime's objects from malloc"
              : "GMime's objects from GSlice's magazines, as G_SLICE in the environment asks "
                "(unset, they come from malloc: faster)");
  const auto stats = filter.Stats();
  LogInfo("model in " + settings.data_dir + ": " + std::to_string(stats->TotalDocuments()) +
          " documents, " + std::to_string(stats->vocabulary_size) + " distinct tokens");
  if (!settings.milter_listen.empty()) {
    if (auto started = milter_front.Start(settings, filter); !started) {
      std::fprintf(stderr, "nbspamd: %s\n", started.error().message.c_str());
      return 1;
    }
    LogInfo("milter listening on " + milter_front.Address());
  }
  if (!settings.spamd_listen.empty()) {
    auto feedback = [&server](core::Feedback f) { server->RecordFeedback(f); };
    if (auto started = spamd_front.Start(settings, filter, feedback); !started) {
      std::fprintf(stderr, "nbspamd: %s\n", started.error().message.c_str());
      return 1;
    }
    LogInfo("spamd listening on " + spamd_front.Address() +
            (settings.spamd_tell.empty() ? "; TELL off" : "; TELL as spamd_tell allows"));
  }
  std::printf("listening on %s\n", http_server::FormatEndpoint(server->LocalEndpoint()).c_str());
  std::fflush(stdout);

  server->Run();
  // The milter and spamd listeners stopped on the signal too (on_shutdown); let their
  // connections finish the message in flight before the model closes.
  milter_front.Stop(std::chrono::seconds(settings.shutdown_timeout_seconds));
  spamd_front.Stop(std::chrono::seconds(settings.shutdown_timeout_seconds));
  // Every connection is closed: finish the training requests still queued (their completions
  // post into the server's stopped I/O context, which must still exist), then close the model.
  filter.StopTraining();
  activity.reset();  // Its last write, with every answer counted.
  LogInfo("stopped serving; closing the model");
  return exit_status.load();
}

}  // namespace
}  // namespace nbspamd

// GMime's small objects with malloc rather than GSlice's magazines (tokenizer/glib_slices.h):
// 1.04 to 1.07 of /classify's throughput in paired runs (docs/PERFORMANCE.md). GSlice reads
// its configuration in GLib's initialisers; an executable's pre-initialisation functions run before
// those of any shared library, so this one sets it in time, for every command of the binary.
namespace {
using PreinitFunction = void (*)(int argc, char** argv, char** environment);
void ChooseMallocSlicesFirst(int, char**, char** environment) {
  nbspamd::tokenizer::ChooseMallocSlices(environment);
}
[[gnu::section(".preinit_array"), gnu::used]] const PreinitFunction kPreinit =
    &ChooseMallocSlicesFirst;
}  // namespace

int main(int argc, char** argv) {
  try {
    return nbspamd::Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nbspamd: fatal: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "nbspamd: fatal: an exception of unknown type\n");
    return 1;
  }
}
