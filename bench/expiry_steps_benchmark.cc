// How long the model expiry holds up training, and whether it keeps up (docs/STORAGE.md "Token
// expiry"): a RocksDB model on disk learns a day of mail at ten times a busy site's rate
// (100,000 messages of 200 tokens: 180 drawn from a shared vocabulary, 20 words never seen before,
// as new words keep coming), learned_at spread over the day; then the ledger retention retires
// all of it in steps of core::kRetireStepRecords records and the token expiry drops the words seen
// once in steps of core::kExpiryStepTokens base records, as the daemon's pass does. Each step is
// one write under the store's write lock: its time is how long training waits for it at most
// (classification reads memory and never waits). Prints the step times (median, 99th percentile,
// max) and how long a day's pass takes against the day.
//
//   build/release/bench/expiry_steps_benchmark [messages, default 100000] [folder, default /tmp]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/spam_filter.h"
#include "model/learning.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kSharedVocabulary = 200'000;
constexpr std::size_t kSharedTokens = 180;
constexpr std::size_t kNewTokens = 20;
constexpr std::size_t kGroup = 256;  // Learns a write, as the training writer groups them.
constexpr std::int64_t kDay = 86400;

struct Times {
  std::vector<double> ms;

  void Add(Clock::duration d) {
    ms.push_back(std::chrono::duration<double, std::milli>(d).count());
  }
  [[nodiscard]] double Quantile(double q) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))];
  }
  [[nodiscard]] double Total() const {
    double total = 0;
    for (const double t : ms) total += t;
    return total;
  }
};

TokenBag Message(std::mt19937_64& random, std::uint64_t& next_new) {
  std::uniform_int_distribution<std::uint64_t> shared(1, kSharedVocabulary);
  TokenBag bag;
  for (std::size_t i = 0; i < kSharedTokens; ++i) bag.entries.push_back({shared(random) * 2, 1});
  for (std::size_t i = 0; i < kNewTokens; ++i) bag.entries.push_back({(next_new++) * 2 + 1, 1});
  std::sort(bag.entries.begin(), bag.entries.end(),
            [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; });
  bag.entries.erase(
      std::unique(bag.entries.begin(), bag.entries.end(),
                  [](const BagEntry& a, const BagEntry& b) { return a.hash == b.hash; }),
      bag.entries.end());
  return bag;
}

int Run(std::size_t messages, const std::filesystem::path& parent) {
  std::string pattern = (parent / "nbspamd-expiry-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return 1;
  const std::filesystem::path folder = pattern;
  int status = 0;
  {
    auto opened = storage::RocksdbStore::Open((folder / "model").string());
    if (!opened) {
      std::fprintf(stderr, "open: %s\n", opened.error().message.c_str());
      return 1;
    }
    storage::RocksdbStore& store = **opened;

    // A day of mail, in groups as the writer writes them.
    std::mt19937_64 random(20261127);
    std::uint64_t next_new = 0;
    const auto learn_start = Clock::now();
    for (std::size_t first = 0; first < messages; first += kGroup) {
      std::vector<model::Delta> deltas;
      model::ModelStats stats = *store.Stats();
      for (std::size_t m = first; m < std::min(messages, first + kGroup); ++m) {
        const std::int64_t learned_at =
            static_cast<std::int64_t>(m) * kDay / static_cast<std::int64_t>(messages);
        std::string id = "m";  // Not "m" + ...: GCC 12 warns wrongly (-Wrestrict).
        id += std::to_string(m);
        model::LearnPlan plan =
            model::PlanLearn(id, m % 3 == 0 ? "spam" : "ham", Message(random, next_new),
                             std::nullopt, stats, {"bench", learned_at});
        deltas.push_back(std::move(plan.delta));
      }
      auto applied = store.ApplyBatch(deltas);
      if (!applied) {
        std::fprintf(stderr, "learn: %s\n", applied.error().message.c_str());
        return 1;
      }
    }
    const double learn_s = std::chrono::duration<double>(Clock::now() - learn_start).count();
    const std::uint64_t vocabulary = store.Stats()->vocabulary_size;
    std::printf("learned %zu messages in %.1f s: %llu distinct tokens\n", messages, learn_s,
                static_cast<unsigned long long>(vocabulary));

    // The ledger retention: every record, in the daemon's steps.
    Times retire;
    std::uint64_t retired = 0;
    std::string from;
    for (bool more = true; more;) {
      const auto start = Clock::now();
      auto step = store.RetireLedger(kDay, core::kRetireStepRecords, "", from);
      retire.Add(Clock::now() - start);
      if (!step) {
        std::fprintf(stderr, "retire: %s\n", step.error().message.c_str());
        return 1;
      }
      retired += step->retired;
      more = step->more;
      from = step->next;
    }
    // The token expiry: the words seen once, in the daemon's steps.
    Times expire;
    std::uint64_t dropped = 0;
    for (std::optional<TokenHash> from = 0; from;) {
      const auto start = Clock::now();
      auto step = store.ExpireTokens({.seen_before = kDay + 1, .max_count = 1}, *from,
                                     core::kExpiryStepTokens);
      expire.Add(Clock::now() - start);
      if (!step) {
        std::fprintf(stderr, "expire: %s\n", step.error().message.c_str());
        return 1;
      }
      dropped += step->dropped;
      from = step->next;
    }
    const double pass_s = (retire.Total() + expire.Total()) / 1000;
    std::printf(
        "retire: %llu records in %zu steps of %zu, %.2f s; step median %.2f ms, p99 %.2f "
        "ms, max %.2f ms\n",
        static_cast<unsigned long long>(retired), retire.ms.size(), core::kRetireStepRecords,
        retire.Total() / 1000, retire.Quantile(0.5), retire.Quantile(0.99), retire.Quantile(1.0));
    std::printf(
        "expire: %llu of %llu tokens dropped in %zu steps of %zu, %.2f s; step median "
        "%.2f ms, p99 %.2f ms, max %.2f ms\n",
        static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(vocabulary),
        expire.ms.size(), core::kExpiryStepTokens, expire.Total() / 1000, expire.Quantile(0.5),
        expire.Quantile(0.99), expire.Quantile(1.0));
    std::printf(
        "a day of mail at %zu messages: its pass takes %.1f s, %.3f%% of the day; "
        "learning it took %.1f s\n",
        messages, pass_s, 100 * pass_s / kDay, learn_s);
    if (store.Stats()->vocabulary_size != vocabulary - dropped) status = 1;
  }
  std::filesystem::remove_all(folder);
  return status;
}

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) {
  const std::size_t messages = argc > 1 ? std::stoul(argv[1]) : 100'000;
  const std::filesystem::path parent = argc > 2 ? argv[2] : "/tmp";
  return nbspamd::bench::Run(messages, parent);
}
