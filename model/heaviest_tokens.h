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

// The first `keep` of the tokens offered, in ComesBefore's order, chosen as they are offered: a
// heap of at most `keep` whose root is the last of them, so that most of a message's hundreds of
// tokens cost a comparison or two and are gone. The order is total, so the tokens kept are the
// same whatever the order of the offers, and the first k of `keep` are those `k` would keep.
// Not thread-safe; one per classification.
class HeaviestTokens {
 public:
  explicit HeaviestTokens(std::size_t keep);

  void Offer(std::size_t index, TokenHash hash, double weight) {
    const WeighedToken token{index, hash, weight, std::fabs(weight)};
    if (heap_.size() < keep_) return Push(token);
    if (keep_ != 0 && ComesBefore(token, heap_.front())) ReplaceLast(token);
  }

  // The tokens kept, in ComesBefore's order.
  [[nodiscard]] std::vector<WeighedToken> InOrder() &&;

 private:
  void Push(const WeighedToken& token);
  // Puts `token` in place of the root, the last of those kept.
  void ReplaceLast(const WeighedToken& token);

  std::size_t keep_;
  std::vector<WeighedToken> heap_;  // A heap with the last in ComesBefore's order at the root.
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_HEAVIEST_TOKENS_H_
