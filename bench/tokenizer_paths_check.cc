// Checks on every corpus message that the ASCII fast word path gives exactly the tokens of the
// ICU-only path (hashes, counts and texts), under the default options and with counts and
// bigrams. Prints the number of messages that match and exits non-zero on any difference.
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus build/release/bench/tokenizer_paths_check
#include <cstdio>
#include <string>
#include <vector>

#include "bench/corpus_files.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::bench {
namespace {

bool SameBags(const TokenBag& a, const TokenBag& b) {
  return a.entries == b.entries && a.texts == b.texts;
}

int Run() {
  const std::vector<std::string>& messages = CorpusMessages();
  tokenizer::TokenizerOptions counting;
  counting.boolean_counts = false;
  counting.word_bigrams = true;
  std::size_t matching = 0;
  std::size_t differing = 0;
  for (const tokenizer::TokenizerOptions& base : {tokenizer::TokenizerOptions{}, counting}) {
    tokenizer::TokenizerOptions fast_options = base;
    fast_options.word_path = tokenizer::WordPath::kAsciiFast;
    tokenizer::TokenizerOptions icu_options = base;
    icu_options.word_path = tokenizer::WordPath::kIcuOnly;
    const tokenizer::Tokenizer fast(fast_options);
    const tokenizer::Tokenizer icu(icu_options);
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (SameBags(fast.Tokenize(messages[i], true), icu.Tokenize(messages[i], true))) {
        ++matching;
      } else {
        ++differing;
        std::fprintf(stderr, "message %zu (bigrams %d): the word paths differ\n", i,
                     base.word_bigrams ? 1 : 0);
      }
    }
  }
  std::printf("%zu corpus messages, %zu checks: %zu identical, %zu different\n", messages.size(),
              matching + differing, matching, differing);
  return differing == 0 ? 0 : 1;
}

}  // namespace
}  // namespace nbspamd::bench

int main() { return nbspamd::bench::Run(); }
