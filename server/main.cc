// nbspamd: the spam-filtering HTTP daemon. Reads its settings (defaults, TOML file, NBSPAMD_*
// environment, flags), opens the model, serves until SIGTERM or SIGINT, then closes the model.
//
// Exit status: 0 after a clean shutdown, 1 for a start-up error (bad settings, data folder, or
// listen address), 2 for a bad command line.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "config/settings.h"
#include "server/log.h"
#include "server/server.h"
#include "server/spam_filter.h"
#include "storage/rocksdb_store.h"

extern char** environ;

namespace nbspamd {
namespace {

constexpr char kVersion[] = "nbspamd 0.1.0";

int Run(int argc, char** argv) {
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    environment.emplace_back(*variable);
  }
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
    std::puts(kVersion);
    return 0;
  }
  const config::Settings& settings = loaded->settings;

  auto store = storage::RocksdbStore::Open(settings.data_dir);
  if (!store) {
    std::fprintf(stderr, "nbspamd: %s\n", store.error().message.c_str());
    return 1;
  }
  server::SpamFilterOptions filter_options;
  filter_options.alpha = settings.alpha;
  filter_options.spam_threshold = settings.spam_threshold;
  filter_options.tokenizer.max_message_bytes = settings.max_message_bytes;
  filter_options.tokenizer.max_tokens = settings.max_tokens;
  filter_options.tokenizer.max_token_chars = settings.max_token_chars;
  filter_options.tokenizer.boolean_counts = settings.boolean_counts;
  filter_options.tokenizer.header_tokens = settings.header_tokens;
  filter_options.tokenizer.word_bigrams = settings.word_bigrams;
  server::SpamFilter filter(std::move(*store), filter_options);

  server::ServerOptions server_options;
  server_options.host = settings.listen_host;
  server_options.port = settings.listen_port;
  server_options.threads = settings.threads;
  server_options.limits.max_body_bytes = settings.max_body_bytes;
  server_options.limits.max_header_bytes = settings.max_header_bytes;
  server_options.limits.idle_timeout = std::chrono::seconds(settings.idle_timeout_seconds);
  server_options.shutdown_timeout = std::chrono::seconds(settings.shutdown_timeout_seconds);
  auto server = server::Server::Create(filter, server_options);
  if (!server) {
    std::fprintf(stderr, "nbspamd: %s\n", server.error().message.c_str());
    return 1;
  }
  const auto stats = filter.Stats();
  server::LogInfo("model in " + settings.data_dir + ": " + std::to_string(stats->TotalDocuments()) +
                  " documents, " + std::to_string(stats->vocabulary_size) + " distinct tokens");
  std::printf("listening on %s\n", server::FormatEndpoint((*server)->LocalEndpoint()).c_str());
  std::fflush(stdout);

  (*server)->Run();
  // Serving has stopped and the signal handlers are gone: a further SIGTERM or SIGINT must not
  // cut the closing of the model short.
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
  // Every connection is closed: finish the training requests still queued (their completions
  // post into the server's stopped I/O context, which must still exist), then close the model.
  filter.StopTraining();
  server::LogInfo("stopped serving; closing the model");
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
