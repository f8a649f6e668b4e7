// token_dump: prints the tokens nbspamd's tokenizer gives each message, for offline accuracy
// experiments (bench/accuracy/explore/README.md). Reads file paths, one per line, on standard
// input; writes one line per message: the path, then each distinct token's text, all separated
// by tabs (a tab or newline inside a token is written as a space). Tokenizer options come as
// flags: --word-bigrams, --sparse-bigrams N, --char-ngrams N, --no-header-tokens, --raw-counts
// (then `text\x1fcount`), --max-token-chars N, --min-token-chars N, --max-tokens N,
// --fold-lookalikes, --byte-ngrams N, --byte-ngram-head BYTES.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>

#include "tokenizer/tokenizer.h"

namespace {

void WriteToken(std::string_view text, std::string& out) {
  for (char c : text) out.push_back(c == '\t' || c == '\n' || c == '\r' ? ' ' : c);
}

}  // namespace

int main(int argc, char** argv) {
  nbspamd::tokenizer::TokenizerOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--word-bigrams") {
      options.word_bigrams = true;
    } else if (flag == "--sparse-bigrams" && i + 1 < argc) {
      options.sparse_bigram_window = std::strtoul(argv[++i], nullptr, 10);
    } else if (flag == "--char-ngrams" && i + 1 < argc) {
      options.word_char_ngrams = std::strtoul(argv[++i], nullptr, 10);
    } else if (flag == "--max-tokens" && i + 1 < argc) {
      options.max_tokens = std::strtoul(argv[++i], nullptr, 10);
    } else if (flag == "--fold-lookalikes") {
      options.fold_lookalikes = true;
    } else if (flag == "--byte-ngrams" && i + 1 < argc) {
      options.byte_ngrams = std::strtoul(argv[++i], nullptr, 10);
    } else if (flag == "--byte-ngram-head" && i + 1 < argc) {
      options.byte_ngram_head = std::strtoul(argv[++i], nullptr, 10);
    } else if (flag == "--no-header-tokens") {
      options.header_tokens = false;
    } else if (flag == "--raw-counts") {
      options.boolean_counts = false;
    } else if (flag == "--max-token-chars" && i + 1 < argc) {
      options.max_token_chars = std::strtoul(argv[++i], nullptr, 10);
    } else if (flag == "--min-token-chars" && i + 1 < argc) {
      options.min_token_chars = std::strtoul(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "token_dump: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  const nbspamd::tokenizer::Tokenizer tokenizer(options);
  std::string path, line;
  while (std::getline(std::cin, path)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "token_dump: cannot read %s\n", path.c_str());
      return 1;
    }
    const std::string message{std::istreambuf_iterator<char>(in), {}};
    const nbspamd::TokenBag bag = tokenizer.Tokenize(message, /*keep_text=*/true);
    line.assign(path);
    for (std::size_t i = 0; i < bag.texts.size(); ++i) {
      line.push_back('\t');
      WriteToken(bag.texts[i].text, line);
      if (!options.boolean_counts) {
        line.push_back('\x1f');
        line.append(std::to_string(bag.entries[i].count));
      }
    }
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  return 0;
}
