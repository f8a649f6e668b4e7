#include "tokenizer/bag_builder.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include "common/token_hash.h"

namespace nbspamd::tokenizer {
namespace {

// The first table size: enough for the distinct tokens of most messages.
constexpr std::size_t kInitialSlots = 512;

}  // namespace

bool BagBuilder::Add(std::string_view text, TokenSource source) {
  if (Full()) return false;
  ++produced_;
  const TokenHash hash = HashToken(text);
  // A text is kept for a hash's first occurrence only: it names the entry.
  if (Count(hash) && keep_text_) texts_.push_back({text, source});
  return true;
}

bool BagBuilder::Count(TokenHash hash) {
  if (2 * (distinct_.size() + 1) > slots_.size()) Grow();
  const std::size_t mask = slots_.size() - 1;
  // Token hashes are XXH3 values: their low bits are already well mixed.
  for (std::size_t slot = static_cast<std::size_t>(hash) & mask;; slot = (slot + 1) & mask) {
    const std::uint32_t index = slots_[slot];
    if (index == 0) {
      distinct_.push_back(BagEntry{hash, 1});
      slots_[slot] = static_cast<std::uint32_t>(distinct_.size());
      return true;
    }
    BagEntry& entry = distinct_[index - 1];
    if (entry.hash == hash) {
      if (entry.count != std::numeric_limits<std::uint32_t>::max()) ++entry.count;
      return false;
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
  if (boolean_counts) {
    for (BagEntry& entry : distinct_) entry.count = 1;
  }
  const auto by_hash = [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; };
  if (!keep_text_) {
    bag.entries = std::move(distinct_);
    std::sort(bag.entries.begin(), bag.entries.end(), by_hash);
    return bag;
  }
  // Sorts the entries with the index of each one's text, by hash alone as above (hashes are
  // distinct; comparing (hash, index) pairs took four times the samples in a profile); the
  // entries are written back in place and the texts, kept back to back, only reindexed.
  struct Indexed {
    TokenHash hash;
    std::uint32_t count;
    std::uint32_t text;
  };
  const std::size_t size = distinct_.size();
  const std::unique_ptr<Indexed[]> order(new Indexed[size]);  // Not zeroed: written next.
  for (std::size_t i = 0; i < size; ++i) {
    order[i] = {distinct_[i].hash, distinct_[i].count, static_cast<std::uint32_t>(i)};
  }
  std::sort(order.get(), order.get() + size,
            [](const Indexed& a, const Indexed& b) { return a.hash < b.hash; });
  std::vector<std::uint32_t> text_order(size);
  for (std::size_t i = 0; i < size; ++i) {
    distinct_[i] = {order[i].hash, order[i].count};
    text_order[i] = order[i].text;
  }
  bag.entries = std::move(distinct_);
  bag.texts = std::move(texts_).Reordered(std::move(text_order));
  return bag;
}

}  // namespace nbspamd::tokenizer
