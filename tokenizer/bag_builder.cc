#include "tokenizer/bag_builder.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "tokenizer/token_hash.h"

namespace nbspamd::tokenizer {
namespace {

std::uint32_t Count(std::size_t occurrences, bool boolean_counts) {
  if (boolean_counts) return 1;
  return static_cast<std::uint32_t>(
      std::min<std::size_t>(occurrences, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

bool BagBuilder::Add(std::string_view text, TokenSource source) {
  if (Full()) return false;
  ++produced_;
  const TokenHash hash = HashToken(text);
  if (keep_text_) {
    with_text_.emplace_back(hash, TokenText{std::string(text), source});
  } else {
    hashes_.push_back(hash);
  }
  return true;
}

TokenBag BagBuilder::Finish(bool boolean_counts) && {
  TokenBag bag;
  if (keep_text_) {
    // Stable, so that among equal hashes the first occurrence names the entry.
    std::stable_sort(with_text_.begin(), with_text_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < with_text_.size();) {
      std::size_t j = i + 1;
      while (j < with_text_.size() && with_text_[j].first == with_text_[i].first) ++j;
      bag.entries.push_back(BagEntry{with_text_[i].first, Count(j - i, boolean_counts)});
      bag.texts.push_back(std::move(with_text_[i].second));
      i = j;
    }
  } else {
    std::sort(hashes_.begin(), hashes_.end());
    for (std::size_t i = 0; i < hashes_.size();) {
      std::size_t j = i + 1;
      while (j < hashes_.size() && hashes_[j] == hashes_[i]) ++j;
      bag.entries.push_back(BagEntry{hashes_[i], Count(j - i, boolean_counts)});
      i = j;
    }
  }
  return bag;
}

}  // namespace nbspamd::tokenizer
