// What the scan history costs each classify, in CPU time, without HTTP or a load generator
// (issue 27; docs/PERFORMANCE.md). Two filters over RocksDB in one process, trained alike on the
// even corpus messages, one keeping a scan history and one not, classify the odd ones; the
// history's writer and RocksDB threads count for the filter that keeps it. The history is first
// filled to its bound (100,000 scans), so that every scan written also removes one.
//
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus build/release/bench/history_cost_benchmark
//       [--rounds 9] [--dir /tmp/nbspamd-history-cost] [--control] [--facts-before]
//       [--single on|off [--passes 1]] [--explain 20] [--words-only]
//
// Each message is classified by both in turn and timed by the thread's CPU clock, so that the
// machine's drifts of speed weigh on both alike. Prints each round's CPU microseconds a classify,
// the medians, and off ÷ on: the throughput a CPU-bound daemon keeps with the history on.
// --control: the same rounds with the history's filter keeping no scan, so that off ÷ on is the
// two filters' difference without the history (1.000 if the benchmark itself is fair).
// --facts-before: both filters keep a history, "off" with the subject and the recipients hashed
// (the defaults before issue 61), "on" with today's defaults (kept in clear): off ÷ on of the
// classifying thread is then the cost of the facts now kept (the writers' CPU counts for both).
// --single on|off: trains, then classifies the test half once with that filter alone and stops,
// for a count of instructions that no other load moves (docs/PERFORMANCE.md):
//   valgrind --tool=callgrind --toggle-collect='nbspamd::core::SpamFilter::Classify*'
//       build/release/bench/history_cost_benchmark --single on   (one command line)
// --explain N: the explaining tokens each scan keeps (setting history_explain), for the history's
// filter (and both, with --facts-before).
// --passes N: with --single, classifies the test half N times, so that a sampling profiler's
// samples of the classify path outnumber the training's (perf record --call-graph dwarf).
// The filters have the daemon's default options (server::FilterOptionsOf of the default
// settings: each word's character n-grams, the training regime); --words-only leaves out the
// n-grams and learns every message, as this benchmark did before issue 63's twelfth round.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/corpus_files.h"
#include "core/spam_filter.h"
#include "history/scan_history.h"
#include "server/model_commands.h"
#include "storage/rocksdb_store.h"

namespace {

using nbspamd::core::SpamFilter;

// CPU microseconds of the whole process (RUSAGE_SELF) or of the calling thread (RUSAGE_THREAD).
double CpuMicros(int who) {
  rusage usage{};
  getrusage(who, &usage);
  const auto micros = [](const timeval& t) { return t.tv_sec * 1e6 + t.tv_usec; };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}

double ThreadCpuNanos() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e9 + now.tv_nsec;
}

// One round's CPU microseconds a classify.
struct RoundCpu {
  double on = 0;          // The classifying thread's, history on.
  double off = 0;         // The classifying thread's, history off.
  double background = 0;  // The other threads': the history's writer and its RocksDB.
};

// `facts`: how the history keeps the facts that find a message (the defaults: as the daemon's).
std::unique_ptr<SpamFilter> OpenFilter(const std::string& dir, bool history, bool words_only,
                                       nbspamd::history::FactPolicies facts = {},
                                       std::size_t explain = 20) {
  auto store = nbspamd::storage::RocksdbStore::Open(dir + "/model");
  if (!store) {
    std::fprintf(stderr, "cannot open %s: %s\n", dir.c_str(), store.error().message.c_str());
    std::exit(1);
  }
  nbspamd::core::SpamFilterOptions options = nbspamd::server::FilterOptionsOf({});
  if (words_only) options = nbspamd::core::SpamFilterOptions{};
  auto filter = std::make_unique<SpamFilter>(std::move(*store), options);
  if (history) {
    auto scans = nbspamd::history::ScanHistory::Open({.path = dir + "/history"});
    if (!scans) {
      std::fprintf(stderr, "cannot open the history: %s\n", scans.error().message.c_str());
      std::exit(1);
    }
    filter->EnableHistory(std::move(*scans), {.facts = facts, .explain = explain});
  }
  return filter;
}

// With a front end, as the HTTP front end asks; with none, a filter with a history keeps none.
void ClassifyOne(const SpamFilter& filter, const std::string& message,
                 std::string_view front_end = "http") {
  auto outcome = filter.Classify({.message = message, .front_end = front_end});
  if (!outcome) {
    std::fprintf(stderr, "classify failed: %s\n", outcome.error().message.c_str());
    std::exit(1);
  }
}

// Classifies every message with both filters, as the HTTP front end does, in turn (which goes
// first alternates), so that a drift of the machine's speed weighs on both alike. The round ends
// once the history has written its scans. With `control`, `on` keeps no scan either: the round
// measures how far apart the two filters are without the history (their stores' own luck).
RoundCpu Round(const SpamFilter& on, const SpamFilter& off,
               const std::vector<const std::string*>& messages, bool control = false) {
  const double process_start = CpuMicros(RUSAGE_SELF);
  const double thread_start = CpuMicros(RUSAGE_THREAD);
  double on_nanos = 0;
  double off_nanos = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    for (int turn = 0; turn < 2; ++turn) {
      const bool history = (turn == 0) == (i % 2 == 0);
      const double start = ThreadCpuNanos();
      ClassifyOne(history ? on : off, *messages[i], control ? "" : "http");
      (history ? on_nanos : off_nanos) += ThreadCpuNanos() - start;
    }
  }
  const_cast<nbspamd::history::ScanHistory*>(on.History())->Flush();
  if (off.History() != nullptr) const_cast<nbspamd::history::ScanHistory*>(off.History())->Flush();
  const double thread = CpuMicros(RUSAGE_THREAD) - thread_start;
  const double others = CpuMicros(RUSAGE_SELF) - process_start - thread;
  const auto count = static_cast<double>(messages.size());
  return {.on = on_nanos / 1000 / count,
          .off = off_nanos / 1000 / count,
          .background = std::max(0.0, others) / count};
}

// Each thread's name and CPU seconds so far, from /proc (ticks of 1/100 s).
std::map<int, std::pair<std::string, double>> ThreadCpu() {
  std::map<int, std::pair<std::string, double>> threads;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    threads[std::stoi(entry.path().filename().string())] = {line.substr(open + 1, close - open - 1),
                                                            (utime + stime) / 100.0};
  }
  return threads;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9;
  std::string dir = "/tmp/nbspamd-history-cost";
  bool control = false;
  bool facts_before = false;
  std::string single;
  int passes = 1;
  std::size_t explain = 20;
  bool words_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--control") {
      control = true;
    } else if (flag == "--facts-before") {
      facts_before = true;
    } else if (flag == "--words-only") {
      words_only = true;
    } else if (flag == "--single" && i + 1 < argc) {
      single = argv[++i];
    } else if (flag == "--explain" && i + 1 < argc) {
      explain = static_cast<std::size_t>(std::max(0, std::atoi(argv[++i])));
    } else if (flag == "--passes" && i + 1 < argc) {
      passes = std::max(1, std::atoi(argv[++i]));
    } else if (flag == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (flag == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "unknown or incomplete flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::filesystem::remove_all(dir);
  std::unique_ptr<SpamFilter> on = OpenFilter(dir + "/on", true, words_only, {}, explain);
  // --facts-before: "off" keeps a history too, with the facts as the defaults kept them before
  // issue 61 (the subject and the recipients hashed), so that off ÷ on, the classifying thread's,
  // is what keeping them in clear costs (the learned state costs a classify nothing).
  std::unique_ptr<SpamFilter> off =
      facts_before ? OpenFilter(dir + "/off", true, words_only,
                                {.subject = nbspamd::history::FactPolicy::kHash,
                                 .recipients = nbspamd::history::FactPolicy::kHash},
                                explain)
                   : OpenFilter(dir + "/off", false, words_only);
  const std::vector<std::string>& corpus = nbspamd::bench::CorpusMessages();
  std::vector<const std::string*> test;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    if (i % 2 == 1) {
      test.push_back(&corpus[i]);
      continue;
    }
    // The labels only shape the model's counts: every token is looked up alike.
    const char* label = i % 4 == 0 ? "spam" : "ham";
    for (SpamFilter* filter : {on.get(), off.get()}) {
      if (!filter->Train(corpus[i], label, std::nullopt)) {
        std::fprintf(stderr, "train failed\n");
        return 1;
      }
    }
  }
  if (!single.empty()) {
    // One pass of one filter alone, for an instruction count (see the file's comment).
    const SpamFilter& filter = single == "on" ? *on : *off;
    for (int pass = 0; pass < passes; ++pass) {
      for (const std::string* message : test) ClassifyOne(filter, *message);
    }
    std::printf("classified %zu messages %d times with the history %s\n", test.size(), passes,
                single.c_str());
    return 0;
  }
  Round(*on, *off, test);  // Warms the allocator and the caches.
  // A history at its bound, as on a server that has run a while: each scan written then also
  // removes the oldest, and RocksDB compacts.
  const nbspamd::history::ScanHistory& history = *on->History();
  while (history.Figures().kept < history.options().max_scans) {
    for (const std::string* message : test) {
      ClassifyOne(*on, *message);
      if (facts_before) ClassifyOne(*off, *message);
    }
    const_cast<nbspamd::history::ScanHistory&>(history).Flush();
    if (facts_before) const_cast<nbspamd::history::ScanHistory*>(off->History())->Flush();
  }
  std::printf("the history holds %llu scans, its bound\n",
              static_cast<unsigned long long>(history.Figures().kept));
  const auto threads_before = ThreadCpu();
  std::vector<double> on_thread, off_thread, background, ratio;
  for (int round = 0; round < rounds; ++round) {
    const RoundCpu cpu = Round(*on, *off, test, control);
    on_thread.push_back(cpu.on);
    off_thread.push_back(cpu.off);
    background.push_back(cpu.background);
    ratio.push_back(cpu.off / (cpu.on + cpu.background));
    std::printf(
        "round %d: classifying thread on %.1f, off %.1f; history's threads %.1f; "
        "off ÷ on %.3f\n",
        round + 1, cpu.on, cpu.off, cpu.background, ratio.back());
  }
  std::printf("threads other than the classifying one, CPU µs a classify with the history on:\n");
  for (const auto& [tid, thread] : ThreadCpu()) {
    const auto before = threads_before.find(tid);
    const double seconds =
        thread.second - (before == threads_before.end() ? 0 : before->second.second);
    if (tid == gettid() || seconds <= 0) continue;
    std::printf("  %-16s %6.1f\n", thread.first.c_str(), seconds * 1e6 / (rounds * test.size()));
  }
  std::printf("%zu messages a round, medians of %d rounds, CPU µs a classify:\n", test.size(),
              rounds);
  std::printf("  classifying thread: on %.1f, off %.1f (off ÷ on %.3f)\n", Median(on_thread),
              Median(off_thread), Median(off_thread) / Median(on_thread));
  // RocksDB compacts now and then, at a large cost: the background's mean, not its median.
  double background_mean = 0;
  for (const double micros : background) background_mean += micros / rounds;
  std::printf("  history's writer and RocksDB threads: median %.1f, mean %.1f\n",
              Median(background), background_mean);
  if (facts_before) {
    std::printf(
        "  (both filters keep a history: their writers' CPU is in the line above, "
        "and off ÷ on of the classifying thread is the facts' cost)\n");
    return 0;
  }
  std::printf(
      "  off ÷ (on + writer), with the classifying threads' medians and the writer's mean: "
      "%.3f, the throughput kept by a CPU-bound daemon\n",
      Median(off_thread) / (Median(on_thread) + background_mean));
  return 0;
}
