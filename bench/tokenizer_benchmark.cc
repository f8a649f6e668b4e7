// Tokenizer throughput on real mail: every corpus message tokenized once per iteration, reported
// as bytes/s of raw message (MB/s in the "bytes_per_second" column) on one thread. texts:1 keeps
// each token's text too, as an explanation or the scan history needs; byte_ngrams:N adds the byte
// N-grams of each message's head (tokenizer/byte_ngrams.h).
// BM_TokenizeCorpusThreads runs one and two threads at once, with texts (as /classify does with
// the history on).
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus build/release/bench/tokenizer_benchmark
#include <benchmark/benchmark.h>

#include "bench/corpus_files.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::bench {
namespace {

void BM_TokenizeCorpus(benchmark::State& state) {
  const auto& messages = CorpusMessages();
  tokenizer::TokenizerOptions options;
  options.boolean_counts = state.range(0) != 0;
  options.word_path =
      state.range(1) != 0 ? tokenizer::WordPath::kIcuOnly : tokenizer::WordPath::kAsciiFast;
  options.byte_ngrams = static_cast<std::size_t>(state.range(3));
  const tokenizer::Tokenizer tokenizer(options);
  const bool keep_text = state.range(2) != 0;
  std::size_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& message : messages) {
      const TokenBag bag = tokenizer.Tokenize(message, keep_text);
      tokens += bag.entries.size();
      benchmark::DoNotOptimize(bag.entries.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * CorpusBytes()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * messages.size()));
  state.counters["distinct_tokens_per_message"] =
      static_cast<double>(tokens) / static_cast<double>(state.iterations() * messages.size());
}
// icu_only:1 measures the reference word path (every word through ICU) for comparison.
BENCHMARK(BM_TokenizeCorpus)
    ->Args({0, 0, 0, 0})
    ->Args({0, 0, 1, 0})
    ->Args({0, 1, 0, 0})
    ->Args({0, 0, 0, 4})
    ->Args({0, 0, 1, 4})
    ->ArgNames({"boolean", "icu_only", "texts", "byte_ngrams"})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2);

// The same tokenizer on one and on two threads at once, each thread reading the whole corpus:
// bytes/s is of all threads together (real time), so two cores that never wait on each other
// give twice one thread's figure. What falls short is time lost to locks shared between
// threads (GLib's, inside GMime), which a one-thread figure cannot show.
void BM_TokenizeCorpusThreads(benchmark::State& state) {
  const auto& messages = CorpusMessages();
  static const tokenizer::Tokenizer tokenizer{tokenizer::TokenizerOptions{}};
  for (auto _ : state) {
    for (const std::string& message : messages) {
      const TokenBag bag = tokenizer.Tokenize(message, /*keep_text=*/true);
      benchmark::DoNotOptimize(bag.entries.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * CorpusBytes()));
}
BENCHMARK(BM_TokenizeCorpusThreads)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2);

}  // namespace
}  // namespace nbspamd::bench

BENCHMARK_MAIN();
