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
#include <expected>
#include <limits>
#include <string>
#include <vector>

#include "common/hex.h"
#include "model/classifier.h"
#include "model/model_stats.h"

namespace nbspamd::model::internal {

inline std::string HashText(TokenHash hash) {
  std::string text;
  AppendHex(text, hash, 16);
  return text;
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
  double score_sum = 0;
  // A known token's weight in the explanation (count · (log P(t|a) − log P(t|b))). With spam and
  // ham, a and b are spam and ham and the weights come from this loop; else they are known only
  // after it (below).
  struct Weighed {
    std::size_t index;
    double weight;
    double magnitude;  // |weight|.
  };
  std::vector<Weighed> weighed;
  const bool weigh_here = options.explain > 0 && two_class;
  if (weigh_here) weighed.reserve(bag.entries.size());
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
        score_sum += x * weight;
        result.scored_tokens += bag.entries[i].count;
      }
      if (weigh_here) {
        const double token_weight = bag.entries[i].count * weight;
        weighed.push_back({i, token_weight, std::fabs(token_weight)});
      }
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
  if (two_class) {
    result.log_odds = result.classes[*spam].log_joint - result.classes[*ham].log_joint;
    result.score =
        result.scored_tokens == 0 ? 0.0 : score_sum / static_cast<double>(result.scored_tokens);
  }
  result.label_index = best;
  const bool third_class = (!spam || best != *spam) && (!ham || best != *ham);
  result.verdict = DecideVerdict(
      result.score, {.spam = options.spam_threshold, .ham = options.ham_threshold}, third_class);

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
    // Every known token's weight, then the text of the `explain` largest only: a message has
    // hundreds of tokens and an explanation a few.
    if (!weigh_here) {
      weighed.reserve(bag.entries.size());
      for (std::size_t i = 0; i < bag.entries.size(); ++i) {
        if (!estimator.Known(i)) continue;
        double weight = estimator.LogLikelihood(i, a);
        if (b) weight -= estimator.LogLikelihood(i, *b);
        const double token_weight = bag.entries[i].count * weight;
        weighed.push_back({i, token_weight, std::fabs(token_weight)});
      }
    }
    // Largest |weight| first; ties by token text so the order is deterministic (without texts,
    // a token's text is its hash in 16 hex digits: the hashes' order).
    const bool has_texts = !bag.texts.empty();
    const auto by_text = [&](const Weighed& x, const Weighed& y) {
      return has_texts ? bag.texts[x.index].text < bag.texts[y.index].text
                       : bag.entries[x.index].hash < bag.entries[y.index].hash;
    };
    const auto by_magnitude = [&](const Weighed& x, const Weighed& y) {
      if (x.magnitude != y.magnitude) return x.magnitude > y.magnitude;
      return by_text(x, y);
    };
    // The order is total (texts, like hashes, are distinct), so the `keep` first are the same
    // however found. Found without comparing texts but where they decide: the keep-th largest
    // magnitude by magnitude alone, then those above it, then of those at it the first by text
    // (weights tie often: every token seen once in one class only weighs the same).
    const std::size_t keep = std::min(options.explain, weighed.size());
    const auto kept_end = weighed.begin() + static_cast<std::ptrdiff_t>(keep);
    if (keep > 0 && keep < weighed.size()) {
      std::nth_element(
          weighed.begin(), kept_end - 1, weighed.end(),
          [](const Weighed& x, const Weighed& y) { return x.magnitude > y.magnitude; });
      const double threshold = (kept_end - 1)->magnitude;
      const auto above_end = std::partition(weighed.begin(), weighed.end(), [&](const Weighed& w) {
        return w.magnitude > threshold;
      });
      const auto at_end = std::partition(
          above_end, weighed.end(), [&](const Weighed& w) { return w.magnitude == threshold; });
      // above_end < kept_end <= at_end: the keep-th is at the threshold.
      if (kept_end < at_end) std::nth_element(above_end, kept_end, at_end, by_text);
    }
    std::sort(weighed.begin(), kept_end, by_magnitude);
    result.explanations.reserve(keep);
    for (std::size_t k = 0; k < keep; ++k) {
      const std::size_t i = weighed[k].index;
      TokenExplanation explanation;
      explanation.count = bag.entries[i].count;
      explanation.weight = weighed[k].weight;
      if (has_texts) {
        explanation.token = bag.texts[i].text;
        explanation.source = bag.texts[i].source;
      } else {
        explanation.token = HashText(bag.entries[i].hash);
      }
      result.explanations.push_back(std::move(explanation));
    }
  }
  return result;
}

}  // namespace nbspamd::model::internal

#endif  // NBSPAMD_MODEL_SCORING_H_
