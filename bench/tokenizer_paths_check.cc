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
#include <string_view>
#include <utility>
#include <vector>

#include "bench/corpus_files.h"
#include "tokenizer/mail_reader.h"
#include "tokenizer/plain_message.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::bench {
namespace {

bool SameBags(const TokenBag& a, const TokenBag& b) {
  return a.entries == b.entries && a.texts == b.texts;
}

bool SameFacts(const tokenizer::MessageFacts& a, const tokenizer::MessageFacts& b) {
  return a.message_id == b.message_id && a.from_domain == b.from_domain && a.subject == b.subject;
}

int Run() {
  const std::vector<std::string>& messages = CorpusMessages();
  tokenizer::TokenizerOptions counting;
  counting.boolean_counts = false;
  counting.word_bigrams = true;
  std::size_t matching = 0;
  std::size_t differing = 0;
  std::size_t plain_header_blocks = 0;  // Counted under each option set.
  std::size_t read_without_parser = 0;  // The same.
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
      tokenizer::MessageFacts fast_facts;
      const TokenBag fast_bag = fast.Tokenize(messages[i], true, &fast_facts);
      std::string_view message = messages[i];
      if (message.starts_with("From ")) message.remove_prefix(message.find('\n') + 1);  // mbox
      if (tokenizer::SplitPlainMessage(message).has_value()) ++plain_header_blocks;
      if (!tokenizer::ReadMail(message, {}).parsed_by_gmime) ++read_without_parser;
      for (const auto& [reference, what] :
           {std::pair{&icu, "the word paths"}, std::pair{&tree, "the HTML paths"},
            std::pair{&gmime, "the MIME decoding paths"}}) {
        tokenizer::MessageFacts facts;
        const TokenBag bag = reference->Tokenize(messages[i], true, &facts);
        if (SameBags(fast_bag, bag) && SameFacts(fast_facts, facts)) {
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
  std::printf("%zu messages with a plain header block (tokenizer/plain_message.h)\n",
              plain_header_blocks / 2);
  std::printf("%zu messages read without GMime's parser (tokenizer/plain_message.h)\n",
              read_without_parser / 2);
  return differing == 0 ? 0 : 1;
}

}  // namespace
}  // namespace nbspamd::bench

int main() { return nbspamd::bench::Run(); }
