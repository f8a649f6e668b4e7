#include "tokenizer/bag_builder.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "common/token_hash.h"

namespace nbspamd::tokenizer {
namespace {

// The first table size: enough for the distinct tokens of most messages.
constexpr std::size_t kInitialSlots = 512;

std::uint32_t CountOf(std::size_t occurrences, bool boolean_counts) {
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
    Count(hash);
  }
  return true;
}

void BagBuilder::Count(TokenHash hash) {
  if (2 * (distinct_.size() + 1) > slots_.size()) Grow();
  const std::size_t mask = slots_.size() - 1;
  // Token hashes are XXH3 values: their low bits are already well mixed.
  for (std::size_t slot = static_cast<std::size_t>(hash) & mask;; slot = (slot + 1) & mask) {
    const std::uint32_t index = slots_[slot];
    if (index == 0) {
      distinct_.push_back(BagEntry{hash, 1});
      slots_[slot] = static_cast<std::uint32_t>(distinct_.size());
      return;
    }
    BagEntry& entry = distinct_[index - 1];
    if (entry.hash == hash) {
      if (entry.count != std::numeric_limits<std::uint32_t>::max()) ++entry.count;
      return;
    }
  }
}

void BagBuilder::Grow() {
  slots_.assign(slots_.empty() ? kInitialSlots : 2 * slots_.size(), 0);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = 0; i < distinct_.size(); ++i) {
    std::size_t slot = static_cast<std::size_t>(distinct_[i].hash) & mask;
    while (slots_[slot] != 0) slot = (slot + 1) & mask;
    slots_[slot] = static_cast<std::uint32_t>(i + 1);
  }
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
      bag.entries.push_back(BagEntry{with_text_[i].first, CountOf(j - i, boolean_counts)});
      bag.texts.push_back(std::move(with_text_[i].second));
      i = j;
    }
  } else {
    bag.entries = std::move(distinct_);
    if (boolean_counts) {
      for (BagEntry& entry : bag.entries) entry.count = 1;
    }
    std::sort(bag.entries.begin(), bag.entries.end(),
              [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; });
  }
  return bag;
}

}  // namespace nbspamd::tokenizer
