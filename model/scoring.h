// ScoreWith: the part of classification every estimate shares, from per-token log likelihoods
// to a ClassifyResult: the joint log probabilities, posteriors by log-sum-exp, the label, the
// ranking score, the verdict and the explanations. Classify (the global model, classifier.h)
// and ClassifyLayered (a user layer over it, layered.h) differ only in their estimator. Internal
// to model/.
//
// An Estimator provides, for the classes of `stats` (same order) and the entries of the bag:
//   bool HasDocuments(c)        whether class c can be the answer at all;
//   double LogPrior(c)          log P(c), for a class with documents;
//   bool Known(i)               whether entry i's token was seen in some class (else skipped);
//   double LogLikelihood(i, c)  log P(w_i | c), for a known token and a class with documents.
#ifndef NBSPAMD_MODEL_SCORING_H_
#define NBSPAMD_MODEL_SCORING_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <expected>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/hex.h"
#include "model/classifier.h"
#include "model/heaviest_tokens.h"
#include "model/model_stats.h"

namespace nbspamd::model::internal {

inline std::string HashText(TokenHash hash) {
  std::string text;
  AppendHex(text, hash, 16);
  return text;
}

// The mean-weight score from each family's Σ x·weight and Σ x over its strong tokens
// (ClassifyOptions::char_ngram_share): 0 when no token is strong.
inline double MeanWeightScore(const double (&sum)[2], const std::uint64_t (&count)[2],
                              const ClassifyOptions& options) {
  const double share = options.char_ngram_share;
  if (share > 0 && count[0] != 0 && count[1] != 0) {
    return (1 - share) * (sum[0] / static_cast<double>(count[0])) +
           share * (sum[1] / static_cast<double>(count[1]));
  }
  const std::uint64_t total = count[0] + count[1];
  return total == 0 ? 0.0 : (sum[0] + sum[1]) / static_cast<double>(total);
}

template <typename Estimator>
std::expected<ClassifyResult, Error> ScoreWith(const TokenBag& bag, const ModelStats& stats,
                                               const Estimator& estimator,
                                               const ClassifyOptions& options) {
  constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
  const std::size_t class_count = stats.classes.size();
  ClassifyResult result;
  result.classes.resize(class_count);
  for (std::size_t c = 0; c < class_count; ++c) {
    result.classes[c].label = stats.classes[c].label;
    result.classes[c].log_joint =
        estimator.HasDocuments(c) ? estimator.LogPrior(c) : kNegativeInfinity;
  }

  const auto spam = stats.FindClass(kSpamLabel);
  const auto ham = stats.FindClass(kHamLabel);
  const bool two_class =
      spam && ham && estimator.HasDocuments(*spam) && estimator.HasDocuments(*ham);
  // Σ x·weight and Σ x over the strong tokens of each family (TokenFamily: words, n-grams).
  double score_sum[2] = {0, 0};
  std::uint64_t scored[2] = {0, 0};
  // The explanation's tokens, chosen as they are weighed (model/heaviest_tokens.h). With spam
  // and ham, the weights are the contrast of spam with ham and come from this loop; else they
  // are known only after it (below).
  HeaviestTokens heaviest(options.explain);
  const bool weigh_here = options.explain > 0 && two_class;
  // log P(t|c) of the current token, each computed once.
  std::vector<double> log_likelihoods(class_count, 0.0);
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    if (!estimator.Known(i)) continue;  // Seen in no class: skipped.
    const double x = bag.entries[i].count;
    result.known_tokens += bag.entries[i].count;
    for (std::size_t c = 0; c < class_count; ++c) {
      if (!estimator.HasDocuments(c)) continue;
      log_likelihoods[c] = estimator.LogLikelihood(i, c);
      result.classes[c].log_joint += x * log_likelihoods[c];
    }
    if (two_class) {
      const double weight = log_likelihoods[*spam] - log_likelihoods[*ham];
      if (std::fabs(weight) > options.score_min_weight) {
        const std::size_t family = bag.entries[i].family == TokenFamily::kCharNgram ? 1 : 0;
        score_sum[family] += x * weight;
        scored[family] += bag.entries[i].count;
      }
      if (weigh_here) heaviest.Offer(i, bag.entries[i].hash, bag.entries[i].count * weight);
    }
  }

  // Posteriors by log-sum-exp.
  double max_log_joint = kNegativeInfinity;
  for (const ClassScore& c : result.classes) max_log_joint = std::max(max_log_joint, c.log_joint);
  if (max_log_joint == kNegativeInfinity) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "every class gives this message probability zero (alpha is 0)");
  }
  double sum = 0;
  for (const ClassScore& c : result.classes) sum += std::exp(c.log_joint - max_log_joint);
  const double log_evidence = max_log_joint + std::log(sum);
  for (ClassScore& c : result.classes) c.probability = std::exp(c.log_joint - log_evidence);

  // The label: the most probable class. The verdict: from the score (model/verdict.h).
  std::size_t best = 0;
  for (std::size_t c = 1; c < class_count; ++c) {
    if (result.classes[c].log_joint > result.classes[best].log_joint) best = c;
  }
  result.scored_tokens = scored[0] + scored[1];
  if (two_class) {
    result.log_odds = result.classes[*spam].log_joint - result.classes[*ham].log_joint;
    result.score = options.score_form == ScoreForm::kLogOdds
                       ? *result.log_odds
                       : MeanWeightScore(score_sum, scored, options);
  }
  result.label_index = best;
  const bool third_class = (!spam || best != *spam) && (!ham || best != *ham);
  // No evidence (no token scored; for the log-odds form, none known: the prior alone) is no
  // verdict either way: unsure, as without a score.
  const bool evidence = options.score_form == ScoreForm::kLogOdds ? result.known_tokens > 0
                                                                  : result.scored_tokens > 0;
  result.verdict =
      DecideVerdict(evidence ? result.score : std::nullopt,
                    {.spam = options.spam_threshold, .ham = options.ham_threshold}, third_class);

  if (options.explain > 0) {
    // Contrast spam with ham, else the winner with the runner-up (or with nothing).
    std::size_t a = best;
    std::optional<std::size_t> b;
    if (two_class) {
      a = *spam;
      b = *ham;
    } else {
      for (std::size_t c = 0; c < class_count; ++c) {
        if (c == best || !estimator.HasDocuments(c)) continue;
        if (!b || result.classes[c].log_joint > result.classes[*b].log_joint) b = c;
      }
    }
    if (!weigh_here) {
      for (std::size_t i = 0; i < bag.entries.size(); ++i) {
        if (!estimator.Known(i)) continue;
        double weight = estimator.LogLikelihood(i, a);
        if (b) weight -= estimator.LogLikelihood(i, *b);
        heaviest.Offer(i, bag.entries[i].hash, bag.entries[i].count * weight);
      }
    }
    const std::vector<WeighedToken> weighed = std::move(heaviest).InOrder();
    result.explanations.reserve(weighed.size());
    for (const WeighedToken& token : weighed) {
      const BagEntry& entry = bag.entries[token.index];
      if (!bag.texts.empty()) {
        const TokenText text = bag.texts[token.index];
        result.explanations.push_back(
            {std::string(text.text), text.source, entry.count, token.weight});
      } else {
        result.explanations.push_back(
            {HashText(entry.hash), TokenSource::kBody, entry.count, token.weight});
      }
    }
  }
  return result;
}

}  // namespace nbspamd::model::internal

#endif  // NBSPAMD_MODEL_SCORING_H_
