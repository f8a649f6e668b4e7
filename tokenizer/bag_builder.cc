#include "tokenizer/bag_builder.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>

#include "common/token_hash.h"

namespace nbspamd::tokenizer {
namespace {

// The first table size: enough for the distinct tokens of most messages.
constexpr std::size_t kInitialSlots = 512;

// Writes the `n` items make(0) .. make(n - 1), whose hashes are distinct, to `out` in order of
// hash: the order std::sort gives. Token hashes are XXH3 values, spread evenly, so one counting
// pass on their top 8 bits puts each item in its bucket and an insertion sort finishes each one
// (a few items for a message's few hundred tokens; std::sort took 2% of the daemon's samples). A
// bucket of more than kLargeBucket items (hashes made to share their top bits) gets std::sort,
// so the worst case stays n log n.
template <typename T, typename Make>
void SortByHash(std::size_t n, const Make& make, T* out) {
  const auto by_hash = [](const T& a, const T& b) { return a.hash < b.hash; };
  constexpr std::size_t kSmall = 128;  // Fewer: std::sort is as quick as the buckets' pass.
  if (n < kSmall) {
    for (std::size_t i = 0; i < n; ++i) out[i] = make(i);
    std::sort(out, out + n, by_hash);
    return;
  }
  constexpr int kBits = 8;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  constexpr std::size_t kLargeBucket = 32;
  const auto bucket_of = [](TokenHash hash) {
    return static_cast<std::size_t>(hash >> (64 - kBits));
  };
  std::array<std::size_t, kBuckets + 1> start{};
  for (std::size_t i = 0; i < n; ++i) ++start[bucket_of(make(i).hash) + 1];
  for (std::size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::array<std::size_t, kBuckets> next;
  std::copy(start.begin(), start.end() - 1, next.begin());
  for (std::size_t i = 0; i < n; ++i) {
    T item = make(i);
    out[next[bucket_of(item.hash)]++] = item;
  }
  for (std::size_t b = 0; b < kBuckets; ++b) {
    T* const first = out + start[b];
    T* const last = out + start[b + 1];
    if (static_cast<std::size_t>(last - first) > kLargeBucket) {
      std::sort(first, last, by_hash);
      continue;
    }
    for (T* i = first + 1; i < last; ++i) {  // Insertion sort.
      const T item = *i;
      T* j = i;
      for (; j > first && item.hash < (j - 1)->hash; --j) *j = *(j - 1);
      *j = item;
    }
  }
}

}  // namespace

bool BagBuilder::Add(std::string_view text, TokenSource source, TokenFamily family) {
  if (Full()) return false;
  ++produced_;
  const TokenHash hash = HashToken(text);
  // A text is kept for a hash's first occurrence only: it names the entry.
  if (Count(hash, family) && keep_text_) texts_.push_back({text, source});
  return true;
}

bool BagBuilder::Count(TokenHash hash, TokenFamily family) {
  if (2 * (distinct_.size() + 1) > slots_.size()) Grow();
  const std::size_t mask = slots_.size() - 1;
  // Token hashes are XXH3 values: their low bits are already well mixed.
  for (std::size_t slot = static_cast<std::size_t>(hash) & mask;; slot = (slot + 1) & mask) {
    const std::uint32_t index = slots_[slot];
    if (index == 0) {
      distinct_.push_back(BagEntry{hash, 1, family});
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
  const std::size_t size = distinct_.size();
  if (!keep_text_) {
    bag.entries.resize(size);
    SortByHash(
        size, [&](std::size_t i) { return distinct_[i]; }, bag.entries.data());
    return bag;
  }
  // Sorts the entries with the index of each one's text, by hash alone as above (hashes are
  // distinct; comparing (hash, index) pairs took four times the samples in a profile); the
  // entries are written back in place and the texts, kept back to back, only reindexed.
  // `text` also carries the entry's family in its top bit, so the struct stays 16 bytes: a bag's
  // distinct tokens are fewer than its message's bytes (at most max_body_bytes, 1 GiB) plus
  // byte_ngram_head, far below 2^31.
  struct Indexed {
    TokenHash hash;
    std::uint32_t count;
    std::uint32_t text;
  };
  constexpr std::uint32_t kNgramBit = std::uint32_t{1} << 31;
  static_assert(static_cast<int>(kLastTokenFamily) == 1, "one bit holds the family");
  const std::unique_ptr<Indexed[]> order(new Indexed[size]);  // Not zeroed: written next.
  SortByHash(
      size,
      [&](std::size_t i) {
        const std::uint32_t family =
            distinct_[i].family == TokenFamily::kCharNgram ? kNgramBit : std::uint32_t{0};
        return Indexed{distinct_[i].hash, distinct_[i].count,
                       static_cast<std::uint32_t>(i) | family};
      },
      order.get());
  std::vector<std::uint32_t> text_order(size);
  for (std::size_t i = 0; i < size; ++i) {
    const bool gram = (order[i].text & kNgramBit) != 0;
    distinct_[i] = {order[i].hash, order[i].count,
                    gram ? TokenFamily::kCharNgram : TokenFamily::kWord};
    text_order[i] = order[i].text & ~kNgramBit;
  }
  bag.entries = std::move(distinct_);
  bag.texts = std::move(texts_).Reordered(std::move(text_order));
  return bag;
}

}  // namespace nbspamd::tokenizer
