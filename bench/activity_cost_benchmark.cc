// What the console's longer activity costs each classify (issue 61; docs/PERFORMANCE.md): every
// classify records into three ranges (hour, day, month: core/activity.h) where it recorded into
// one. In one run, rounds alternate:
//   - classify: CPU µs a SpamFilter::Classify over RocksDB, trained on the even corpus messages,
//     of the odd ones (it records into the three ranges);
//   - record: CPU ns an ActivityWindow::RecordClassify, by two threads at once (the daemon's two
//     workers contend on the same slots), into three ranges and into the hour alone.
// The throughput a CPU-bound daemon keeps is (classify − record3 + record1) ÷ classify, from the
// medians: what a classify costs without the day and the month against what it costs with them.
//
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus build/release/bench/activity_cost_benchmark
//       [--rounds 9] [--dir /tmp/nbspamd-activity-cost]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/corpus_files.h"
#include "core/activity.h"
#include "core/spam_filter.h"
#include "storage/rocksdb_store.h"

namespace {

using nbspamd::core::ActivityWindow;
using nbspamd::core::SpamFilter;

double ThreadCpuNanos() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e9 + now.tv_nsec;
}

double Median(std::vector<double> values) {
  std::ranges::sort(values);
  return values[values.size() / 2];
}

// CPU ns a RecordClassify of `window`, two threads recording `count` each at once.
double RecordNanos(ActivityWindow& window, int count) {
  double nanos[2] = {0, 0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&window, &nanos, t, count] {
      const double start = ThreadCpuNanos();
      for (int i = 0; i < count; ++i) {
        window.RecordClassify(
            i % 3 == 0 ? nbspamd::model::Verdict::kSpam : nbspamd::model::Verdict::kHam,
            std::chrono::microseconds(100 + i % 700));
      }
      nanos[t] = ThreadCpuNanos() - start;
    });
  }
  for (std::thread& thread : threads) thread.join();
  return (nanos[0] + nanos[1]) / (2.0 * count);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9;
  std::string dir = "/tmp/nbspamd-activity-cost";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (flag == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "unknown or incomplete flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::filesystem::remove_all(dir);
  auto store = nbspamd::storage::RocksdbStore::Open(dir + "/model");
  if (!store) {
    std::fprintf(stderr, "cannot open %s: %s\n", dir.c_str(), store.error().message.c_str());
    return 1;
  }
  SpamFilter filter(std::move(*store), nbspamd::core::SpamFilterOptions{});
  const std::vector<std::string>& corpus = nbspamd::bench::CorpusMessages();
  std::vector<const std::string*> test;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    if (i % 2 == 1) {
      test.push_back(&corpus[i]);
    } else if (!filter.Train(corpus[i], i % 4 == 0 ? "spam" : "ham", std::nullopt)) {
      std::fprintf(stderr, "train failed\n");
      return 1;
    }
  }
  const auto classify_round = [&] {
    const double start = ThreadCpuNanos();
    for (const std::string* message : test) {
      if (!filter.Classify({.message = *message, .front_end = "http"})) {
        std::fprintf(stderr, "classify failed\n");
        std::exit(1);
      }
    }
    return (ThreadCpuNanos() - start) / 1000.0 / static_cast<double>(test.size());
  };
  ActivityWindow three;
  ActivityWindow hour_only({}, 1);
  constexpr int kRecords = 1'000'000;
  classify_round();  // Warms the caches and the allocator.
  RecordNanos(three, kRecords / 10);
  std::vector<double> classify_us, record3_ns, record1_ns;
  for (int round = 0; round < rounds; ++round) {
    classify_us.push_back(classify_round());
    // Which window goes first alternates, so that a drift weighs on both alike.
    if (round % 2 == 0) {
      record3_ns.push_back(RecordNanos(three, kRecords));
      record1_ns.push_back(RecordNanos(hour_only, kRecords));
    } else {
      record1_ns.push_back(RecordNanos(hour_only, kRecords));
      record3_ns.push_back(RecordNanos(three, kRecords));
    }
    std::printf(
        "round %d: classify %.1f µs; record into three ranges %.1f ns, the hour alone %.1f ns\n",
        round + 1, classify_us.back(), record3_ns.back(), record1_ns.back());
  }
  const double classify = Median(classify_us) * 1000.0;
  const double record3 = Median(record3_ns);
  const double record1 = Median(record1_ns);
  std::printf("%zu messages a round, medians of %d rounds:\n", test.size(), rounds);
  std::printf("  classify %.1f µs (records into three ranges)\n", classify / 1000.0);
  std::printf("  RecordClassify: three ranges %.1f ns, the hour alone %.1f ns (+%.1f ns)\n",
              record3, record1, record3 - record1);
  std::printf("  throughput kept, (classify - record3 + record1) / classify: %.4f\n",
              (classify - record3 + record1) / classify);
  return 0;
}
