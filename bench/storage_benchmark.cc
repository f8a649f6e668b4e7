// Micro-benchmarks of the classify path and of training, on one thread unless said:
//   BM_Classify          model::Classify of corpus messages against a model learned from the
//                        corpus (snapshots read beforehand); per_token = time per bag entry
//   BM_CountCacheRead/N  CountCache::Read of 200-token messages against a synthetic model of N
//                        tokens; per_token = time per token looked up
//   BM_CountCacheReadThreads/threads:T  the same, 1,000,000 tokens, T threads reading one cache
//                        at once, as the daemon's workers do (per_token: each thread's time)
//   BM_StoreRead/N       the same through RocksdbStore::Read (a model written to a temp folder)
//   BM_Apply/disk        RocksdbStore::Apply of a 200-token learn delta, WAL synced to the
//                        temp folder's disk
//   BM_Apply/tmpfs       the same in /dev/shm, where a sync is free: Apply's cost without it
//
//   NBSPAMD_BENCH_CORPUS=/path/to/corpus build/release/bench/storage_benchmark
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one line)
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <random>

#include "bench/corpus_files.h"
#include "bench/synthetic_model.h"
#include "model/classifier.h"
#include "model/learning.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_store.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::bench {
namespace {

constexpr std::size_t kMessages = 1000;

// A fresh folder below `parent`, removed with everything in it at exit of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::filesystem::path& parent) {
    std::string pattern = (parent / "nbspamd-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  [[nodiscard]] std::string Join(const char* name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::unique_ptr<storage::RocksdbStore> OpenOrAbort(const std::string& path) {
  auto store = storage::RocksdbStore::Open(path);
  if (!store) std::abort();
  return std::move(*store);
}

std::vector<TokenBag> SyntheticMessages(std::uint64_t tokens) {
  std::mt19937_64 random(tokens);
  std::vector<TokenBag> bags;
  for (std::size_t i = 0; i < kMessages; ++i) bags.push_back(SyntheticMessage(random, tokens));
  return bags;
}

// Reads every bag in turn; per_token is the time per looked-up token. Threads start at bags
// spread over the list, as workers classify different messages at once.
template <typename Reader>
void ReadBags(benchmark::State& state, const Reader& reader, const std::vector<TokenBag>& bags) {
  std::size_t tokens = 0;
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * bags.size() /
                  static_cast<std::size_t>(state.threads());
  for (auto _ : state) {
    const TokenBag& bag = bags[i++ % bags.size()];
    const model::Snapshot snapshot = reader.Read(bag.entries);
    benchmark::DoNotOptimize(snapshot.counts.data());
    tokens += bag.entries.size();
  }
  state.counters["per_token"] = benchmark::Counter(
      static_cast<double>(tokens), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Classify(benchmark::State& state) {
  // Learned from every other corpus message, labels alternating: the cost of Classify depends
  // on the sizes of the bag and the model's classes, not on which class a count is in.
  static const auto* setup = [] {
    const tokenizer::Tokenizer tokenizer{tokenizer::TokenizerOptions{}};
    auto* store = new storage::MemoryStore();
    auto* pairs = new std::vector<std::pair<TokenBag, model::Snapshot>>();
    const auto& messages = CorpusMessages();
    for (std::size_t i = 0; i < messages.size(); ++i) {
      TokenBag bag = tokenizer.Tokenize(messages[i]);
      if (i % 2 == 0) {
        const std::string id = std::to_string(i);
        const auto plan =
            model::PlanLearn(id, i % 4 == 0 ? "spam" : "ham", bag, std::nullopt, *store->Stats());
        if (!store->Apply(plan.delta)) std::abort();
      } else {
        pairs->emplace_back(std::move(bag), model::Snapshot{});
      }
    }
    for (auto& [bag, snapshot] : *pairs) snapshot = store->Read(bag.entries);
    return pairs;
  }();
  const model::ClassifyOptions options;
  std::size_t tokens = 0, i = 0;
  for (auto _ : state) {
    const auto& [bag, snapshot] = (*setup)[i++ % setup->size()];
    auto result = model::Classify(bag, snapshot, options);
    benchmark::DoNotOptimize(result);
    tokens += bag.entries.size();
  }
  state.counters["per_token"] = benchmark::Counter(
      static_cast<double>(tokens), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Classify);

void BM_CountCacheRead(benchmark::State& state) {
  const auto tokens = static_cast<std::uint64_t>(state.range(0));
  storage::CountCache cache{model::ModelStats{}};
  LoadSyntheticModel(cache, tokens);
  ReadBags(state, cache, SyntheticMessages(tokens));
}
BENCHMARK(BM_CountCacheRead)->Arg(10000)->Arg(1000000);

void BM_CountCacheReadThreads(benchmark::State& state) {
  constexpr std::uint64_t kTokens = 1000000;
  static const auto* cache = [] {
    auto* shared = new storage::CountCache{model::ModelStats{}};
    LoadSyntheticModel(*shared, kTokens);
    return shared;
  }();
  static const auto* bags = new std::vector<TokenBag>(SyntheticMessages(kTokens));
  ReadBags(state, *cache, *bags);
}
BENCHMARK(BM_CountCacheReadThreads)->Threads(1)->Threads(2)->UseRealTime();

void BM_StoreRead(benchmark::State& state) {
  const auto tokens = static_cast<std::uint64_t>(state.range(0));
  const ScratchDir dir(std::filesystem::temp_directory_path());
  auto store = OpenOrAbort(dir.Join("model"));
  if (!WriteSyntheticModel(*store, tokens)) std::abort();
  store.reset();
  store = OpenOrAbort(dir.Join("model"));  // As at start-up: everything loaded from disk.
  ReadBags(state, *store, SyntheticMessages(tokens));
}
BENCHMARK(BM_StoreRead)->Arg(10000)->Arg(1000000);

// Learns message i, of 200 tokens from a 100k-token model, and forgets message i - 100, so the
// model and the ledger keep their size; each iteration is one Apply.
void BM_Apply(benchmark::State& state, const std::string& parent) {
  constexpr std::uint64_t kTokens = 100000;
  const ScratchDir dir(parent);
  auto store = OpenOrAbort(dir.Join("model"));
  if (!WriteSyntheticModel(*store, kTokens)) std::abort();
  const std::vector<TokenBag> bags = SyntheticMessages(kTokens);
  std::size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    model::Delta delta;
    const std::string id = std::to_string(i / 2);
    if (i % 2 == 0) {
      delta =
          model::PlanLearn(id, "spam", bags[(i / 2) % bags.size()], std::nullopt, *store->Stats())
              .delta;
    } else {
      delta = model::PlanForget(id, **store->FindLearned(id), *store->Stats());
    }
    ++i;
    state.ResumeTiming();
    if (!store->Apply(delta)) std::abort();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_Apply, disk, std::filesystem::temp_directory_path().string())
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Apply, tmpfs, std::string("/dev/shm"))->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nbspamd::bench

BENCHMARK_MAIN();
