// Token bags for unit tests, written once: from explicit entries, or from the words of a text.
#ifndef NBSPAMD_TESTS_SUPPORT_TOKEN_BAGS_H_
#define NBSPAMD_TESTS_SUPPORT_TOKEN_BAGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/token_bag.h"

namespace nbspamd::test_support {

// A bag of exactly these entries (no token texts).
inline TokenBag BagOf(std::vector<BagEntry> entries) {
  TokenBag bag;
  bag.entries = std::move(entries);
  return bag;
}

// A bag of the distinct space-separated words of `text`, each with the number of times it occurs,
// hashed with std::hash, in word order, each with its text (TokenSource::kBody).
inline TokenBag BagOfWords(const std::string& text) {
  std::map<std::string, std::uint32_t> words;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    ++words[text.substr(start, end - start)];
    start = end + 1;
  }
  TokenBag bag;
  for (const auto& [word, count] : words) {
    bag.entries.push_back({std::hash<std::string>{}(word), count});
    bag.texts.push_back({word, TokenSource::kBody});
  }
  return bag;
}

}  // namespace nbspamd::test_support

#endif  // NBSPAMD_TESTS_SUPPORT_TOKEN_BAGS_H_
