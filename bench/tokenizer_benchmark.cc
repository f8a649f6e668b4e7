// Tokenizer throughput on real mail: every corpus message tokenized once per iteration, reported
// as bytes/s of raw message (MB/s in the "bytes_per_second" column) on one thread. texts:1 keeps
// each token's text too, as an explanation or the scan history needs; byte_ngrams:N adds the byte
// N-grams of each message's head (tokenizer/byte_ngrams.h).
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

}  // namespace
}  // namespace nbspamd::bench

BENCHMARK_MAIN();
