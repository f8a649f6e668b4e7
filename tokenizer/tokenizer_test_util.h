// Helpers shared by the tokenizer tests: tokenize with keep_text and look at the tokens by text.
#ifndef NBSPAMD_TOKENIZER_TOKENIZER_TEST_UTIL_H_
#define NBSPAMD_TOKENIZER_TOKENIZER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/token_bag.h"
#include "common/token_hash.h"
#include "common/utf8.h"
#include "tokenizer/byte_ngrams.h"
#include "tokenizer/charset.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::tokenizer::test_util {

// The tokens of one message, by text.
struct Tokens {
  std::map<std::string, std::uint32_t> counts;  // Token text -> occurrences.
  std::map<std::string, TokenSource> sources;   // Token text -> where it came from.
  std::uint64_t total = 0;                      // Occurrences of all tokens.

  [[nodiscard]] bool Has(const std::string& text) const { return counts.contains(text); }

  // text -> count of the tokens whose source is `source`.
  [[nodiscard]] std::map<std::string, std::uint32_t> From(TokenSource source) const {
    std::map<std::string, std::uint32_t> result;
    for (const auto& [text, count] : counts) {
      if (sources.at(text) == source) result[text] = count;
    }
    return result;
  }

  // text -> count of the tokens starting with `prefix`.
  [[nodiscard]] std::map<std::string, std::uint32_t> WithPrefix(std::string_view prefix) const {
    std::map<std::string, std::uint32_t> result;
    for (const auto& [text, count] : counts) {
      if (text.starts_with(prefix)) result[text] = count;
    }
    return result;
  }

  // Whether some token contains `part`.
  [[nodiscard]] bool AnyContains(std::string_view part) const {
    for (const auto& [text, count] : counts) {
      if (text.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

// Checks the TokenBag invariants (sorted unique hashes, counts >= 1, texts parallel to entries,
// each text hashing to its entry, a byte n-gram's by its hashed text, and valid UTF-8) and
// returns its tokens.
inline Tokens TokensOf(const TokenBag& bag) {
  Tokens tokens;
  EXPECT_EQ(bag.texts.size(), bag.entries.size());
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    EXPECT_GE(bag.entries[i].count, 1u);
    if (i > 0) {
      EXPECT_LT(bag.entries[i - 1].hash, bag.entries[i].hash) << "at " << i;
    }
    tokens.total += bag.entries[i].count;
    if (i >= bag.texts.size()) continue;
    const TokenText& text = bag.texts[i];
    if (text.source == TokenSource::kByteNgram) {  // A readable text: hashed is another.
      const std::optional<std::string> hashed = ByteNgramHashedText(text.text);
      EXPECT_TRUE(hashed.has_value()) << text.text;
      EXPECT_EQ(HashToken(hashed.value_or("")), bag.entries[i].hash) << text.text;
    } else {
      EXPECT_EQ(HashToken(text.text), bag.entries[i].hash) << text.text;
    }
    EXPECT_TRUE(IsValidUtf8(text.text)) << "not UTF-8 at " << i;
    tokens.counts[std::string(text.text)] = bag.entries[i].count;
    tokens.sources[std::string(text.text)] = text.source;
  }
  return tokens;
}

inline Tokens TokensOf(std::string_view message, const TokenizerOptions& options = {}) {
  return TokensOf(Tokenizer(options).Tokenize(message, /*keep_text=*/true));
}

// The default options, but counting every occurrence (boolean_counts is on by default): for
// tests about counts and the token budget.
inline TokenizerOptions CountingOptions() {
  TokenizerOptions options;
  options.boolean_counts = false;
  return options;
}

// Seconds that `run` takes.
template <typename Function>
double SecondsFor(Function&& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Hostile inputs must be handled "quickly": well under this even in a sanitizer build on a busy
// machine (they take well under a second in a release build).
inline constexpr double kQuickSeconds = 30.0;

}  // namespace nbspamd::tokenizer::test_util

#endif  // NBSPAMD_TOKENIZER_TOKENIZER_TEST_UTIL_H_
