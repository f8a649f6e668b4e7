// Checks on every corpus message that the tokenizer's fast paths give exactly the tokens of their
// references (hashes, counts and texts), under the default options and with counts and bigrams:
// the ASCII fast word path against the ICU-only path, HTML read from libxml2's SAX events
// against the walk of its tree, and the mail reader's in-place decoding of header values and part
// contents against GMime's own (MimePath). Prints the number of messages that match and exits
// non-zero on any difference.
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus build/release/bench/tokenizer_paths_check
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus:bench/accuracy/corpora build/release/bench/...
#include <cstdio>
#include <string>
#include <utility>
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
    fast_options.html_path = tokenizer::HtmlPath::kEvents;
    tokenizer::TokenizerOptions icu_words = fast_options;
    icu_words.word_path = tokenizer::WordPath::kIcuOnly;
    tokenizer::TokenizerOptions html_tree = fast_options;
    html_tree.html_path = tokenizer::HtmlPath::kTree;
    tokenizer::TokenizerOptions gmime_decoding = fast_options;
    gmime_decoding.mime_path = tokenizer::MimePath::kGmime;
    const tokenizer::Tokenizer fast(fast_options);
    const tokenizer::Tokenizer icu(icu_words);
    const tokenizer::Tokenizer tree(html_tree);
    const tokenizer::Tokenizer gmime(gmime_decoding);
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const TokenBag fast_bag = fast.Tokenize(messages[i], true);
      for (const auto& [reference, what] :
           {std::pair{&icu, "the word paths"}, std::pair{&tree, "the HTML paths"},
            std::pair{&gmime, "the MIME decoding paths"}}) {
        if (SameBags(fast_bag, reference->Tokenize(messages[i], true))) {
          ++matching;
        } else {
          ++differing;
          std::fprintf(stderr, "message %zu (bigrams %d): %s differ\n", i,
                       base.word_bigrams ? 1 : 0, what);
        }
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
