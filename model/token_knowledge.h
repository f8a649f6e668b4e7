// TokenKnowledge: what the model knows of one token, and the strongest tokens of a class. No I/O.
//
//   TokenFigures f = FiguresOf(counts, stats, /*alpha=*/0.1);   // P(w|c) per class and weight
//   StrongestTokens strongest({.limit = 50, .min_count = 5});
//   for (each token of the model) strongest.Offer(hash, counts, stats, alpha);
//   std::vector<StrongToken> spam = strongest.Spam();  // largest weight first
//
// The maths is the classifier's (model/classifier.h): P(w|c) = (n_wc + alpha) / (n_c + alpha·|V|)
// and a token's weight is log P(w|spam) − log P(w|ham), the ScanToken / TokenExplanation weight of
// one occurrence (model/heaviest_tokens.h, model/scoring.h): positive pushes towards spam.
//
// The strongest tokens of spam are the `limit` tokens with the largest weight among those counted
// at least `min_count` times over spam and ham together (n_w,spam + n_w,ham >= min_count), ties by
// hash; those of ham the `limit` with the smallest (most negative) weight by the same rule. The
// minimum count keeps the hapaxes out: with alpha 0.1 every token seen once in spam alone weighs
// the same, near the top, and says little. A token of weight 0 or on the other side of 0 is never
// listed for a class.
//
// Pure; StrongestTokens is not thread-safe (one per computation).
#ifndef NBSPAMD_MODEL_TOKEN_KNOWLEDGE_H_
#define NBSPAMD_MODEL_TOKEN_KNOWLEDGE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/token_bag.h"
#include "model/model_stats.h"

namespace nbspamd::model {

// One token's figures in a model of stats `stats`.
struct TokenFigures {
  // P(w|c) per class, in the model's class order; for a class with no tokens and |V| 0 (nothing
  // learned), 0.
  std::vector<double> probabilities;
  // log P(w|spam) − log P(w|ham); nullopt unless spam and ham both have documents (as the
  // classifier, which weighs only then).
  std::optional<double> weight;
};

// The figures of a token counted `counts` (n_wc by class, possibly shorter than the class list:
// the missing classes count 0) with Laplace smoothing `alpha` (> 0).
[[nodiscard]] TokenFigures FiguresOf(std::span<const std::uint64_t> counts, const ModelStats& stats,
                                     double alpha);

// One token of a strongest list.
struct StrongToken {
  TokenHash hash = 0;
  std::uint64_t spam = 0;  // n_w,spam
  std::uint64_t ham = 0;   // n_w,ham
  double weight = 0;

  friend bool operator==(const StrongToken&, const StrongToken&) = default;
};

struct StrongestOptions {
  std::size_t limit = 50;       // Tokens kept per class.
  std::uint64_t min_count = 5;  // n_w,spam + n_w,ham at least this (0 acts as 1).
};

// The strongest tokens of spam and of ham, chosen as tokens are offered (any order: the result
// is the same). Each offer costs two logarithms when the token passes min_count, else a compare.
class StrongestTokens {
 public:
  // For a model of `stats` with smoothing `alpha`. Offers are ignored unless spam and ham both
  // have documents.
  StrongestTokens(const ModelStats& stats, double alpha, StrongestOptions options);

  void Offer(TokenHash hash, std::span<const std::uint64_t> counts);

  // Tokens offered that passed min_count (whatever their weight).
  [[nodiscard]] std::uint64_t eligible() const { return eligible_; }
  // The lists: spam largest weight first, ham smallest first; ties by hash.
  [[nodiscard]] std::vector<StrongToken> Spam() const;
  [[nodiscard]] std::vector<StrongToken> Ham() const;

 private:
  void Keep(std::vector<StrongToken>& kept, const StrongToken& token, bool spam_side);

  StrongestOptions options_;
  std::optional<std::size_t> spam_;
  std::optional<std::size_t> ham_;
  double alpha_ = 1;
  double log_spam_denominator_ = 0;
  double log_ham_denominator_ = 0;
  std::uint64_t eligible_ = 0;
  std::vector<StrongToken> spam_kept_;  // Candidates; pruned to limit when twice as many.
  std::vector<StrongToken> ham_kept_;
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_TOKEN_KNOWLEDGE_H_
