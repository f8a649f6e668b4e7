// nbspamd: the spam-filtering HTTP daemon. Reads its settings (defaults, TOML file, NBSPAMD_*
// environment, flags), opens the model, serves until SIGTERM or SIGINT, then closes the model.
//
//   nbspamd [FLAGS]                    serve
//   nbspamd check [--repair] [FLAGS]   verify the model in the data folder offline (and repair)
//
// Exit status: 0 after a clean shutdown, 1 for a start-up error (bad settings, data folder, or
// listen address), 2 for a bad command line. `check`: 0 when the model is consistent (or was
// repaired), 1 when it cannot be read, 2 for a bad command line, 3 when it is inconsistent.
#include <grp.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/version.h"
#include "config/auth_tokens.h"
#include "config/settings.h"
#include "core/spam_filter.h"
#include "http_api/server.h"
#include "milter/address.h"
#include "milter/counters.h"
#include "milter/listener.h"
#include "milter/options.h"
#include "replication/cluster.h"
#include "server/milter_backend.h"
#include "storage/model_check.h"
#include "storage/rocksdb_store.h"

extern char** environ;

namespace nbspamd {
namespace {

std::vector<std::string> Environment() {
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    environment.emplace_back(*variable);
  }
  return environment;
}

void PrintReport(const storage::CheckReport& report) {
  for (const model::ClassStats& c : report.stats.classes) {
    std::printf("class %s: %llu documents, %llu tokens\n", c.label.c_str(),
                static_cast<unsigned long long>(c.documents),
                static_cast<unsigned long long>(c.tokens));
  }
  std::printf("vocabulary: %llu; token records: %llu; ledger records: %llu\n",
              static_cast<unsigned long long>(report.stats.vocabulary_size),
              static_cast<unsigned long long>(report.token_records),
              static_cast<unsigned long long>(report.ledger_records));
  for (const std::string& problem : report.problems) std::printf("problem: %s\n", problem.c_str());
}

// `nbspamd check [--repair] [FLAGS]`: the data folder comes from the settings, as when serving.
int Check(int argc, char** argv) {
  bool repair = false;
  std::vector<const char*> args = {argv[0]};
  for (int i = 2; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--repair") {
      repair = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  const std::vector<std::string> environment = Environment();
  auto loaded = config::LoadSettings(args, environment);
  if (!loaded) {
    std::fprintf(stderr, "nbspamd check: %s\n", loaded.error().message.c_str());
    return 2;
  }
  if (loaded->action != config::LoadResult::Action::kRun) {
    std::puts(
        "usage: nbspamd check [--repair] [--data-dir DIR | --config FILE]\n"
        "Checks that the model in the data folder is consistent: token counts, class totals,\n"
        "|V| and document counts agree with the training ledger. --repair rebuilds the counts\n"
        "from the ledger (stop the daemon first). Exit status: 0 consistent or repaired,\n"
        "1 unreadable, 2 bad command line, 3 inconsistent.");
    return 0;
  }
  const std::string& path = loaded->settings.data_dir;
  auto report = repair ? storage::RepairModel(path) : storage::CheckModel(path);
  if (!report) {
    std::fprintf(stderr, "nbspamd check: %s\n", report.error().message.c_str());
    return 1;
  }
  PrintReport(*report);
  if (!report->ok()) {
    std::printf("%s: inconsistent; 'nbspamd check --repair' rebuilds it from the ledger\n",
                path.c_str());
    return 3;
  }
  std::printf("%s: %s\n", path.c_str(), repair ? "consistent (repaired if needed)" : "consistent");
  return 0;
}

// The milter front end's settings as its options, checked by the milter's own validators. Errors:
// kInvalidArgument naming the key.
std::expected<milter::ConnectionContext, Error> MilterContext(const config::Settings& settings) {
  const auto invalid = [](std::string_view key, const Error& error) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid value for '" + std::string(key) + "': " + error.message);
  };
  milter::ConnectionContext context;
  auto fail_mode = milter::ParseFailMode(settings.milter_fail_mode);
  if (!fail_mode) return invalid("milter_fail_mode", fail_mode.error());
  context.session.fail_mode = *fail_mode;
  context.session.max_body_bytes = settings.max_body_bytes;
  context.session.reject_score = settings.milter_reject_score;
  context.session.reject_text = settings.milter_reject_text;
  context.session.quarantine_score = settings.milter_quarantine_score;
  context.session.flag_header = settings.milter_flag_header;
  context.session.status_header = settings.milter_status_header;
  context.connection.read_timeout = std::chrono::seconds(settings.milter_read_timeout_seconds);
  // Each setting on its own, so that the error names the key that is wrong.
  const struct {
    std::string_view key;
    milter::SessionOptions options;
  } checks[] = {
      {"milter_reject_text",
       [&] {
         milter::SessionOptions o;
         o.reject_text = context.session.reject_text;
         return o;
       }()},
      {"milter_flag_header",
       [&] {
         milter::SessionOptions o;
         o.flag_header = context.session.flag_header;
         return o;
       }()},
      {"milter_status_header",
       [&] {
         milter::SessionOptions o;
         o.status_header = context.session.status_header;
         return o;
       }()},
      {"milter_reject_score",
       [&] {
         milter::SessionOptions o;
         o.reject_score = context.session.reject_score;
         return o;
       }()},
      {"milter_quarantine_score",
       [&] {
         milter::SessionOptions o;
         o.quarantine_score = context.session.quarantine_score;
         return o;
       }()},
  };
  for (const auto& check : checks) {
    if (auto valid = milter::ValidateSessionOptions(check.options); !valid) {
      return invalid(check.key, valid.error());
    }
  }
  if (auto valid = milter::ValidateSessionOptions(context.session); !valid) {
    return invalid("max_body_bytes", valid.error());
  }
  if (auto valid = milter::ValidateConnectionOptions(context.connection); !valid) {
    return invalid("milter_read_timeout_seconds", valid.error());
  }
  return context;
}

// The milter front end when milter_listen is set: its own I/O thread (the HTTP server keeps
// its I/O context to itself, and milter packets are small: parsing them is little work), and the
// classification on the adapter's workers.
struct MilterFrontEnd {
  milter::MilterCounters counters;
  std::unique_ptr<server::SpamFilterMilterBackend> backend;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::shared_ptr<milter::MilterListener> listener;
  std::thread thread;

  ~MilterFrontEnd() { Stop(std::chrono::seconds(0)); }

  // Stops accepting, lets each connection finish its message in flight (up to `grace`), then
  // stops the I/O thread and the workers.
  void Stop(std::chrono::seconds grace) {
    if (!listener) return;
    listener->Stop();
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (listener->OpenConnections() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (listener->OpenConnections() > 0) {
      LogWarning("milter connections still open after the shutdown timeout: closing them");
    }
    work.reset();
    io.stop();
    if (thread.joinable()) thread.join();
    backend->Stop();
    listener.reset();
  }
};

// Starts the milter listener. Errors: kInvalidArgument for a bad milter_* setting (naming the
// key), kUnavailable when the address cannot be bound.
std::expected<void, Error> StartMilter(const config::Settings& settings, core::SpamFilter& filter,
                                       MilterFrontEnd& front) {
  auto address = milter::ParseMilterAddress(settings.milter_listen);
  if (!address) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid value for 'milter_listen': " + address.error().message);
  }
  auto context = MilterContext(settings);
  if (!context) return std::unexpected(context.error());
  gid_t group = static_cast<gid_t>(-1);
  if (!settings.milter_socket_group.empty()) {
    const struct group* entry = getgrnam(settings.milter_socket_group.c_str());
    if (entry == nullptr) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "invalid value for 'milter_socket_group': no group '" +
                           settings.milter_socket_group + "'");
    }
    group = entry->gr_gid;
  }
  const unsigned workers =
      settings.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : settings.threads;
  front.backend = std::make_unique<server::SpamFilterMilterBackend>(filter, workers);
  context->backend = front.backend.get();
  context->counters = &front.counters;
  context->on_error = [](std::string_view why) {
    LogDebug("milter connection closed: " + std::string(why));
  };
  auto listener = milter::MilterListener::Create(front.io, *address, std::move(*context),
                                                 static_cast<mode_t>(settings.milter_socket_mode));
  if (!listener) return std::unexpected(listener.error());
  front.listener = std::move(*listener);
  const milter::MilterAddress bound = front.listener->LocalAddress();
  if (bound.kind == milter::MilterAddress::Kind::kUnix && group != static_cast<gid_t>(-1) &&
      chown(bound.path.c_str(), static_cast<uid_t>(-1), group) != 0) {
    return MakeError(ErrorCode::kUnavailable, "cannot give the milter socket " + bound.path +
                                                  " the group '" + settings.milter_socket_group +
                                                  "'");
  }
  front.listener->Run();
  front.work.emplace(front.io.get_executor());
  front.thread = std::thread([&front] {
    for (;;) {
      try {
        front.io.run();
        return;
      } catch (const std::exception& e) {
        // Connections catch their own; a count here would be a bug outside any of them.
        milter::MilterCounters::Add(front.counters.internal_errors);
        LogError(std::string("milter I/O thread: ") + e.what());
      }
    }
  });
  return {};
}

// True for addresses only this machine reaches.
bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

int Run(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "check") return Check(argc, argv);
  const std::vector<std::string> environment = Environment();
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

  // SIGTERM and SIGINT go to the server's I/O threads only (Server::Run unblocks them there):
  // blocked here, before the model's threads (the training writer, RocksDB's) start, so those
  // inherit the block. A signal that comes before Run waits, pending, until Run takes it.
  sigset_t termination;
  sigemptyset(&termination);
  sigaddset(&termination, SIGTERM);
  sigaddset(&termination, SIGINT);
  pthread_sigmask(SIG_BLOCK, &termination, nullptr);

  // Declared before the model, so destroyed after it is closed: from Server::Create on, the server
  // handles SIGTERM and SIGINT (a further one only ends the drain early), so no signal can cut
  // the closing of the model short.
  std::unique_ptr<http_api::Server> server;
  // The milter front end, stopped after the HTTP server, before the model closes.
  MilterFrontEnd milter_front;
  storage::RocksdbStoreOptions store_options;
  store_options.log = [](std::string_view line) { LogWarning(line, {{"from", "rocksdb"}}); };
  auto store = storage::RocksdbStore::Open(settings.data_dir, store_options);
  if (!store) {
    std::fprintf(stderr, "nbspamd: %s\n", store.error().message.c_str());
    return 1;
  }
  core::SpamFilterOptions filter_options;
  filter_options.alpha = settings.alpha;
  filter_options.spam_threshold = settings.spam_threshold;
  filter_options.ham_threshold = settings.ham_threshold;
  filter_options.score_min_weight = settings.score_min_weight;
  filter_options.tokenizer.max_message_bytes = settings.max_message_bytes;
  filter_options.tokenizer.max_tokens = settings.max_tokens;
  filter_options.tokenizer.max_token_chars = settings.max_token_chars;
  filter_options.tokenizer.boolean_counts = settings.boolean_counts;
  filter_options.tokenizer.header_tokens = settings.header_tokens;
  filter_options.tokenizer.word_bigrams = settings.word_bigrams;
  core::SpamFilter filter(std::move(*store), filter_options);

  http_api::ServerOptions server_options;
  server_options.host = settings.listen_host;
  server_options.port = settings.listen_port;
  server_options.threads = settings.threads;
  server_options.limits.max_body_bytes = settings.max_body_bytes;
  server_options.limits.max_header_bytes = settings.max_header_bytes;
  server_options.limits.idle_timeout = std::chrono::seconds(settings.idle_timeout_seconds);
  server_options.shutdown_timeout = std::chrono::seconds(settings.shutdown_timeout_seconds);
  server_options.router.authenticator = http_api::Authenticator(std::move(*tokens));
  server_options.router.auth_classify = settings.auth_classify;
  server_options.router.max_in_flight = settings.max_in_flight;
  server_options.router.backup_dir = settings.backup_dir;
  server_options.router.train_rate_limit = settings.train_rate_limit;
  server_options.router.extra_metrics = [&milter_front]() -> std::string {
    return milter_front.listener ? server::RenderMilterMetrics(milter_front.counters) : "";
  };
  server_options.on_shutdown = [&milter_front] {
    if (milter_front.listener) milter_front.listener->Stop();
  };
  auto created = http_api::Server::Create(filter, server_options);
  if (!created) {
    std::fprintf(stderr, "nbspamd: %s\n", created.error().message.c_str());
    return 1;
  }
  server = std::move(*created);
  if (!settings.cluster_redis.empty()) {
    replication::ClusterOptions cluster;
    cluster.redis_host = settings.cluster_redis_host;
    cluster.redis_port = settings.cluster_redis_port;
    cluster.stream = settings.cluster_stream;
    cluster.name = settings.cluster_name;
    if (cluster.name.empty()) {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "nbspamd");
      cluster.name = std::string(host) + ":" + std::to_string(server->LocalEndpoint().port());
    }
    cluster.wait_applied = settings.cluster_wait_applied;
    cluster.retention = std::chrono::seconds(settings.cluster_retention_seconds);
    if (auto joined = replication::EnableCluster(filter, std::move(cluster)); !joined) {
      std::fprintf(stderr, "nbspamd: %s\n", joined.error().message.c_str());
      return 1;
    }
    LogInfo("cluster mode: training through the Redis stream '" + settings.cluster_stream +
            "' at " + settings.cluster_redis + ", from position " +
            (filter.Cluster()->applied.empty() ? std::string("0-0") : filter.Cluster()->applied));
  }
  const auto stats = filter.Stats();
  LogInfo("model in " + settings.data_dir + ": " + std::to_string(stats->TotalDocuments()) +
          " documents, " + std::to_string(stats->vocabulary_size) + " distinct tokens");
  if (!settings.milter_listen.empty()) {
    if (auto started = StartMilter(settings, filter, milter_front); !started) {
      std::fprintf(stderr, "nbspamd: %s\n", started.error().message.c_str());
      return 1;
    }
    LogInfo("milter listening on " +
            milter::FormatMilterAddress(milter_front.listener->LocalAddress()));
  }
  std::printf("listening on %s\n", http_api::FormatEndpoint(server->LocalEndpoint()).c_str());
  std::fflush(stdout);

  server->Run();
  // The milter listener stopped on the signal too (on_shutdown); let its connections finish the
  // message in flight before the model closes.
  milter_front.Stop(std::chrono::seconds(settings.shutdown_timeout_seconds));
  // Every connection is closed: finish the training requests still queued (their completions
  // post into the server's stopped I/O context, which must still exist), then close the model.
  filter.StopTraining();
  LogInfo("stopped serving; closing the model");
  return 0;
}

}  // namespace
}  // namespace nbspamd

int main(int argc, char** argv) {
  try {
    return nbspamd::Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nbspamd: fatal: %s\n", e.what());
    return 1;
  }
}
