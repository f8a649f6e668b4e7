#include "model/classifier.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace nbspamd::model {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

std::string HashText(TokenHash hash) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

// log P(w|c) for a token counted `count` times in class c.
double LogLikelihood(std::uint64_t count, double alpha, double log_denominator) {
  return std::log(static_cast<double>(count) + alpha) - log_denominator;
}

}  // namespace

std::optional<double> ClassifyResult::SpamProbability() const {
  for (const ClassScore& c : classes) {
    if (c.label == kSpamLabel) return c.probability;
  }
  return std::nullopt;
}

std::expected<ClassifyResult, Error> Classify(const TokenBag& bag, const Snapshot& snapshot,
                                              const ClassifyOptions& options) {
  const ModelStats& stats = *snapshot.stats;
  const std::size_t class_count = stats.classes.size();
  const std::uint64_t total_documents = stats.TotalDocuments();
  if (total_documents == 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the model has not learned any message yet: train it first");
  }

  const double vocabulary = static_cast<double>(stats.vocabulary_size);
  std::vector<double> log_denominators(class_count);
  ClassifyResult result;
  result.classes.resize(class_count);
  for (std::size_t c = 0; c < class_count; ++c) {
    const ClassStats& cls = stats.classes[c];
    result.classes[c].label = cls.label;
    log_denominators[c] = std::log(static_cast<double>(cls.tokens) + options.alpha * vocabulary);
    result.classes[c].log_joint = cls.documents == 0
                                      ? kNegativeInfinity
                                      : std::log(static_cast<double>(cls.documents)) -
                                            std::log(static_cast<double>(total_documents));
  }

  const auto spam = stats.FindClass(kSpamLabel);
  const auto ham = stats.FindClass(kHamLabel);
  const bool two_class =
      spam && ham && stats.classes[*spam].documents > 0 && stats.classes[*ham].documents > 0;
  double score_sum = 0;
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    const auto counts = snapshot.CountsOf(i);
    if (std::all_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n == 0; })) {
      continue;  // Seen in no class: skipped.
    }
    const double x = bag.entries[i].count;
    result.known_tokens += bag.entries[i].count;
    for (std::size_t c = 0; c < class_count; ++c) {
      if (stats.classes[c].documents == 0) continue;
      result.classes[c].log_joint +=
          x * LogLikelihood(counts[c], options.alpha, log_denominators[c]);
    }
    if (two_class) {
      const double weight = LogLikelihood(counts[*spam], options.alpha, log_denominators[*spam]) -
                            LogLikelihood(counts[*ham], options.alpha, log_denominators[*ham]);
      if (std::fabs(weight) > options.score_min_weight) {
        score_sum += x * weight;
        result.scored_tokens += bag.entries[i].count;
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
        if (c == best || stats.classes[c].documents == 0) continue;
        if (!b || result.classes[c].log_joint > result.classes[*b].log_joint) b = c;
      }
    }
    for (std::size_t i = 0; i < bag.entries.size(); ++i) {
      const auto counts = snapshot.CountsOf(i);
      if (std::all_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n == 0; })) {
        continue;
      }
      const BagEntry& entry = bag.entries[i];
      double weight = LogLikelihood(counts[a], options.alpha, log_denominators[a]);
      if (b) weight -= LogLikelihood(counts[*b], options.alpha, log_denominators[*b]);
      TokenExplanation explanation;
      explanation.count = entry.count;
      explanation.weight = entry.count * weight;
      if (i < bag.texts.size()) {
        explanation.token = bag.texts[i].text;
        explanation.source = bag.texts[i].source;
      } else {
        explanation.token = HashText(entry.hash);
      }
      result.explanations.push_back(std::move(explanation));
    }
    // Largest |weight| first; ties by token text so the order is deterministic.
    const auto by_magnitude = [](const TokenExplanation& x, const TokenExplanation& y) {
      const double mx = std::fabs(x.weight), my = std::fabs(y.weight);
      if (mx != my) return mx > my;
      return x.token < y.token;
    };
    const std::size_t keep = std::min(options.explain, result.explanations.size());
    std::partial_sort(result.explanations.begin(), result.explanations.begin() + keep,
                      result.explanations.end(), by_magnitude);
    result.explanations.resize(keep);
  }
  return result;
}

}  // namespace nbspamd::model
