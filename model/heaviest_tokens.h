// HeaviestTokens: the tokens an explanation names, chosen as a message's tokens are weighed.
#ifndef NBSPAMD_MODEL_HEAVIEST_TOKENS_H_
#define NBSPAMD_MODEL_HEAVIEST_TOKENS_H_

#include <cmath>
#include <cstddef>
#include <vector>

#include "common/token_bag.h"

namespace nbspamd::model {

// A known token's weight in an explanation: count · (log P(t|a) − log P(t|b)).
struct WeighedToken {
  std::size_t index = 0;  // Into the bag's entries.
  TokenHash hash = 0;
  double weight = 0;
  double magnitude = 0;  // |weight|.
};

// The explanation's order: largest |weight| first, ties by hash. Weights tie often (every token
// seen once in one class only weighs the same); hashes are distinct, so the order is total, and
// it is the same whether or not the bag has texts. An object, not a function, so that the
// standard algorithms given it inline it.
struct ComesBeforeOrder {
  bool operator()(const WeighedToken& x, const WeighedToken& y) const {
    if (x.magnitude != y.magnitude) return x.magnitude > y.magnitude;
    return x.hash < y.hash;
  }
};
inline constexpr ComesBeforeOrder ComesBefore;

// The first `keep` of the tokens offered, in ComesBefore's order, chosen as they are offered.
// Offers are admitted to a buffer only while they come before the floor, the keep-th of the
// best seen so far; when the buffer is full, a selection keeps the first `keep` and raises the
// floor to the last of them. So most of a message's hundreds of tokens cost one comparison with
// the floor and are gone, and an admitted one an append (a heap cost a sift for each). The order
// is total, so the tokens kept are the same whatever the order of the offers, and the first k of
// `keep` are those `k` would keep. Not thread-safe; one per classification.
class HeaviestTokens {
 public:
  explicit HeaviestTokens(std::size_t keep);

  void Offer(std::size_t index, TokenHash hash, double weight) {
    const WeighedToken token{index, hash, weight, std::fabs(weight)};
    if (!ComesBefore(token, floor_)) return;
    candidates_.push_back(token);
    if (candidates_.size() == capacity_) Compact();
  }

  // The tokens kept, in ComesBefore's order.
  [[nodiscard]] std::vector<WeighedToken> InOrder() &&;

 private:
  // Keeps the first keep_ of the candidates and makes the last of them the floor.
  void Compact();

  std::size_t keep_;
  std::size_t capacity_;  // Candidates held before a Compact: more than keep_.
  // What an offer must come before to be admitted: at first a token that every finite weight
  // comes before (with keep_ 0, one that none does).
  WeighedToken floor_;
  std::vector<WeighedToken> candidates_;  // Admitted, in the order offered or as Compact left them.
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_HEAVIEST_TOKENS_H_
