// train_load: sustained POST /train throughput and latency of nbspamd daemons, side by side.
//
// For each message set, each connection count K and each run, every daemon binary given is
// started on a fresh RocksDB folder, sent a fixed number of /train requests (each a new message
// id, label from the corpus group) over K keep-alive connections, and stopped; the binaries take
// turns run by run, so the noise of a shared machine falls on all of them alike. Prints, per set
// and K, the median over the runs of messages/s, p50 and p99 latency, and the ratio of each
// binary's messages/s to the first binary's (the baseline).
//
//   NBSPAMD_BENCH_CORPUS=.../data train_load --daemon base=/tmp/base/nbspamd
//       --daemon new=build/release/server/nbspamd --connections 1,8,32,64 --runs 3
//
// Message sets: "corpus" (the raw SpamAssassin messages), "corpus-1k" (their first 1 KiB) and
// "synthetic-200" (200-byte word salads), the last two to show what the commit path sustains
// when tokenizing costs little.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench/perf/load_client/daemon_launcher.h"
#include "bench/perf/load_client/http_load.h"

namespace nbspamd::bench {
namespace {

namespace fs = std::filesystem;

struct Message {
  std::string label;
  std::string text;
};

struct Daemon {
  std::string name;
  std::string binary;
};

struct Settings {
  std::vector<Daemon> daemons;
  std::vector<std::size_t> connections = {1, 8, 32, 64};
  std::vector<std::string> sets = {"corpus", "corpus-1k", "synthetic-200"};
  std::size_t messages = 2000;
  std::size_t runs = 3;
  unsigned daemon_threads = 2;
  std::string data_root = fs::temp_directory_path().string();
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "train_load: %s\n"
               "usage: train_load --daemon NAME=BINARY [--daemon NAME=BINARY ...]\n"
               "  [--connections 1,8,32,64] [--sets corpus,corpus-1k,synthetic-200]\n"
               "  [--messages 2000] [--runs 3] [--daemon-threads 2] [--data-root DIR]\n"
               "The corpus is read from NBSPAMD_BENCH_CORPUS (every *.txt below it; a path\n"
               "with 'spam' in it is spam, any other ham).\n",
               problem.c_str());
  std::exit(2);
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::size_t ParseCount(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value == 0) Usage("not a positive number: " + text);
  return static_cast<std::size_t>(value);
}

Settings ParseArguments(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--daemon") {
      const std::size_t equals = value.find('=');
      if (equals == std::string::npos || equals == 0) Usage("--daemon takes NAME=BINARY");
      settings.daemons.push_back({value.substr(0, equals), value.substr(equals + 1)});
    } else if (flag == "--connections") {
      settings.connections.clear();
      for (const std::string& part : SplitCommas(value)) {
        settings.connections.push_back(ParseCount(part));
      }
    } else if (flag == "--sets") {
      settings.sets = SplitCommas(value);
    } else if (flag == "--messages") {
      settings.messages = ParseCount(value);
    } else if (flag == "--runs") {
      settings.runs = ParseCount(value);
    } else if (flag == "--daemon-threads") {
      settings.daemon_threads = static_cast<unsigned>(ParseCount(value));
    } else if (flag == "--data-root") {
      settings.data_root = value;
    } else {
      Usage("unknown flag " + flag);
    }
  }
  if (settings.daemons.empty()) Usage("give at least one --daemon");
  return settings;
}

std::vector<Message> ReadCorpus() {
  const char* root = std::getenv("NBSPAMD_BENCH_CORPUS");
  if (root == nullptr) Usage("set NBSPAMD_BENCH_CORPUS to the corpus folder");
  std::vector<fs::path> paths;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".txt") {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Message> messages;
  for (const fs::path& path : paths) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) continue;
    std::string text;
    char chunk[65536];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
    std::fclose(file);
    if (text.empty()) continue;
    const bool spam = path.string().find("spam") != std::string::npos;
    messages.push_back({spam ? "spam" : "ham", std::move(text)});
  }
  if (messages.empty()) Usage(std::string("no *.txt messages under ") + root);
  // Interleave the groups, so every run trains both classes whatever its length.
  std::mt19937 random(1);
  std::shuffle(messages.begin(), messages.end(), random);
  return messages;
}

std::vector<Message> Synthetic(std::size_t count, std::size_t bytes) {
  static const char* const kWords[] = {
      "account", "verify",  "lunch", "meeting", "free",     "offer",   "cheap",  "pills",
      "report",  "invoice", "win",   "prize",   "friday",   "project", "review", "password",
      "urgent",  "money",   "click", "here",    "schedule", "notes",   "budget", "deal"};
  std::mt19937 random(2);
  std::vector<Message> messages;
  for (std::size_t i = 0; i < count; ++i) {
    std::string text;
    while (text.size() < bytes) {
      text += kWords[random() % std::size(kWords)];
      if (random() % 3 == 0) text.append(std::to_string(random() % 1000));
      text.push_back(' ');
    }
    text.resize(bytes);
    messages.push_back({i % 2 == 0 ? "spam" : "ham", std::move(text)});
  }
  return messages;
}

std::vector<Message> MessageSet(const std::string& name, const std::vector<Message>& corpus) {
  if (name == "corpus") return corpus;
  if (name == "corpus-1k") {
    std::vector<Message> cut = corpus;
    for (Message& message : cut)
      message.text.resize(std::min<std::size_t>(message.text.size(), 1024));
    return cut;
  }
  if (name == "synthetic-200") return Synthetic(4096, 200);
  Usage("unknown message set " + name);
}

struct Measurement {
  double per_second = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// One run: a fresh daemon on a fresh folder, `count` trains over `connections` connections.
Measurement RunOnce(const Settings& settings, const Daemon& daemon,
                    const std::vector<Message>& messages, std::size_t connections,
                    std::size_t run_number) {
  const fs::path dir = fs::path(settings.data_root) /
                       ("nbspamd-train-load-" + std::to_string(::getpid()) + "-" + daemon.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto launched = LaunchedDaemon::Start(daemon.binary,
                                        {"--data-dir", (dir / "model").string(), "--threads",
                                         std::to_string(settings.daemon_threads)},
                                        (dir / "log").string());
  if (!launched) {
    std::fprintf(stderr, "train_load: %s\n", launched.error().c_str());
    std::exit(1);
  }
  const std::string prefix = "/train?id=r" + std::to_string(run_number) + "-";
  auto result =
      RunLoad({.port = launched->port(), .connections = connections, .requests = settings.messages},
              [&](std::size_t index) {
                const Message& message = messages[index % messages.size()];
                return LoadRequest{prefix + std::to_string(index) + "&label=" + message.label,
                                   message.text};
              });
  const int status = launched->Stop();
  if (!result) {
    std::fprintf(stderr, "train_load: %s: %s\n", daemon.name.c_str(), result.error().c_str());
    std::exit(1);
  }
  if (result->failed > 0 || status != 0) {
    std::fprintf(stderr, "train_load: %s: %zu failed requests (%s), exit status %d\n",
                 daemon.name.c_str(), result->failed, result->first_failure.c_str(), status);
    std::exit(1);
  }
  fs::remove_all(dir);
  return {result->Throughput(), result->LatencyMs(0.50), result->LatencyMs(0.99)};
}

int Main(int argc, char** argv) {
  const Settings settings = ParseArguments(argc, argv);
  const std::vector<Message> corpus = ReadCorpus();
  std::printf("# %zu trains per run, %zu runs, daemon --threads %u, data under %s\n",
              settings.messages, settings.runs, settings.daemon_threads,
              settings.data_root.c_str());
  std::printf("%-14s %4s %-10s %10s %9s %9s %8s   runs (msg/s)\n", "set", "K", "daemon", "msg/s",
              "p50 ms", "p99 ms", "ratio");
  std::size_t run_number = 0;
  for (const std::string& set : settings.sets) {
    const std::vector<Message> messages = MessageSet(set, corpus);
    for (const std::size_t connections : settings.connections) {
      std::map<std::string, std::vector<Measurement>> measured;
      for (std::size_t run = 0; run < settings.runs; ++run) {
        for (const Daemon& daemon : settings.daemons) {
          measured[daemon.name].push_back(
              RunOnce(settings, daemon, messages, connections, ++run_number));
        }
      }
      double baseline = 0;
      for (const Daemon& daemon : settings.daemons) {
        std::vector<double> per_second, p50, p99;
        for (const Measurement& m : measured[daemon.name]) {
          per_second.push_back(m.per_second);
          p50.push_back(m.p50_ms);
          p99.push_back(m.p99_ms);
        }
        const double median = Median(per_second);
        if (baseline == 0) baseline = median;
        std::string runs;
        for (double value : per_second) {
          runs.push_back(' ');
          runs.append(std::to_string(static_cast<long>(value)));
        }
        std::printf("%-14s %4zu %-10s %10.0f %9.2f %9.2f %7.2fx  %s\n", set.c_str(), connections,
                    daemon.name.c_str(), median, Median(p50), Median(p99), median / baseline,
                    runs.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) { return nbspamd::bench::Main(argc, argv); }
