// The scale benchmark: how classify, train, memory and start-up behave as the model grows.
//
//   scale_benchmark write DIR TOKENS             writes a synthetic two-class model of TOKENS
//                                                tokens into the RocksDB folder DIR
//   scale_benchmark measure DIR TOKENS [MESSAGES] opens DIR and prints one line of key=value
//                                                figures
//
// bench/scale/run drives it over 10k to 10M tokens and reports medians of several runs.
// Figures of `measure`:
//   open_s           RocksdbStore::Open (RocksDB open and loading every token into memory)
//   rss_empty_mb     VmRSS after opening an empty model (the process's fixed cost)
//   rss_loaded_mb    VmRSS after opening DIR, the empty model closed
//   bytes_per_token  (rss_loaded - rss_empty) / TOKENS
//   classify_*_us    Store::Read + model::Classify of one 200-token message whose tokens are all
//                    in the model, drawn uniformly (median, p99, p99.9 over MESSAGES messages)
//   train_*_us       Store::Apply of one learn of such a message, synced WAL (median, p99); each
//                    learn is forgotten again, so the model is left as it was
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/synthetic_model.h"
#include "model/classifier.h"
#include "model/learning.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

// VmRSS of this process in bytes.
double ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  }
  return 0;
}

// The q-quantile of `values` (sorted in place), in microseconds.
double QuantileMicros(std::vector<double>& values, double q) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  return values[index] * 1e6;
}

std::unique_ptr<storage::RocksdbStore> OpenOrExit(const std::string& path) {
  auto store = storage::RocksdbStore::Open(path);
  if (!store) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), store.error().message.c_str());
    std::exit(1);
  }
  return std::move(*store);
}

int Write(const std::string& path, std::uint64_t tokens) {
  if (std::filesystem::exists(path)) {
    std::fprintf(stderr, "%s exists already\n", path.c_str());
    return 1;
  }
  const auto start = Clock::now();
  auto store = OpenOrExit(path);
  if (auto written = WriteSyntheticModel(*store, tokens); !written) {
    std::fprintf(stderr, "writing the model failed: %s\n", written.error().message.c_str());
    return 1;
  }
  std::printf("wrote %llu tokens in %.1f s\n", static_cast<unsigned long long>(tokens),
              Seconds(Clock::now() - start));
  return 0;
}

int Measure(const std::string& path, std::uint64_t tokens, std::size_t messages) {
  double rss_empty = 0;
  {
    std::string pattern = (std::filesystem::temp_directory_path() / "nbspamd-scale-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) return 1;
    {
      auto empty = OpenOrExit(pattern + "/model");
      rss_empty = ResidentBytes();
    }
    std::filesystem::remove_all(pattern);
  }

  const auto open_start = Clock::now();
  auto store = OpenOrExit(path);
  const double open_seconds = Seconds(Clock::now() - open_start);
  const double rss_loaded = ResidentBytes();
  if (store->Stats()->vocabulary_size != tokens) {
    std::fprintf(stderr, "%s holds %llu tokens, not %llu\n", path.c_str(),
                 static_cast<unsigned long long>(store->Stats()->vocabulary_size),
                 static_cast<unsigned long long>(tokens));
    return 1;
  }

  std::mt19937_64 random(7);
  std::vector<TokenBag> bags;
  for (std::size_t i = 0; i < std::min<std::size_t>(messages, 2000); ++i) {
    bags.push_back(SyntheticMessage(random, tokens));
  }
  const model::ClassifyOptions options;
  double spam_probability = 0;  // Used, so that nothing is optimised away.
  auto classify = [&](const TokenBag& bag) {
    const model::Snapshot snapshot = store->Read(bag.entries);
    const auto result = model::Classify(bag, snapshot, options);
    spam_probability += result ? result->classes[0].probability : 0;
  };
  for (const TokenBag& bag : bags) classify(bag);  // Warm-up.
  std::vector<double> classify_seconds;
  classify_seconds.reserve(messages);
  for (std::size_t i = 0; i < messages; ++i) {
    // New messages keep coming, as in a real stream: a bag reused too often would stay cached.
    const TokenBag& bag = bags[i % bags.size()];
    const auto start = Clock::now();
    classify(bag);
    classify_seconds.push_back(Seconds(Clock::now() - start));
    if (i % bags.size() == bags.size() - 1) {
      for (TokenBag& replaced : bags) replaced = SyntheticMessage(random, tokens);
    }
  }

  std::vector<double> train_seconds;
  for (std::size_t i = 0; i < 200; ++i) {
    const std::string id = "scale-" + std::to_string(i);
    const TokenBag bag = SyntheticMessage(random, tokens);
    const auto plan = model::PlanLearn(id, "spam", bag, std::nullopt, *store->Stats());
    const auto start = Clock::now();
    auto learned = store->Apply(plan.delta);
    train_seconds.push_back(Seconds(Clock::now() - start));
    if (!learned) return 1;
    const auto entry = store->FindLearned(id);
    if (!entry || !*entry || !store->Apply(model::PlanForget(id, **entry, *store->Stats()))) {
      return 1;
    }
  }

  std::printf(
      "tokens=%llu open_s=%.3f rss_empty_mb=%.1f rss_loaded_mb=%.1f bytes_per_token=%.1f "
      "classify_median_us=%.2f classify_p99_us=%.2f classify_p999_us=%.2f "
      "train_median_us=%.1f train_p99_us=%.1f checksum=%.3f\n",
      static_cast<unsigned long long>(tokens), open_seconds, rss_empty / 1e6, rss_loaded / 1e6,
      (rss_loaded - rss_empty) / static_cast<double>(std::max<std::uint64_t>(tokens, 1)),
      QuantileMicros(classify_seconds, 0.5), QuantileMicros(classify_seconds, 0.99),
      QuantileMicros(classify_seconds, 0.999), QuantileMicros(train_seconds, 0.5),
      QuantileMicros(train_seconds, 0.99), spam_probability);
  return 0;
}

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "write") {
    return nbspamd::bench::Write(args[1], std::stoull(args[2]));
  }
  if ((args.size() == 3 || args.size() == 4) && args[0] == "measure") {
    return nbspamd::bench::Measure(args[1], std::stoull(args[2]),
                                   args.size() == 4 ? std::stoull(args[3]) : 20000);
  }
  std::fprintf(stderr,
               "usage: scale_benchmark write DIR TOKENS\n"
               "       scale_benchmark measure DIR TOKENS [MESSAGES]\n");
  return 2;
}
