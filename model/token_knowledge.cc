#include "model/token_knowledge.h"

#include <algorithm>
#include <cmath>

#include "model/classifier.h"

namespace nbspamd::model {
namespace {

std::uint64_t CountAt(std::span<const std::uint64_t> counts, std::size_t c) {
  return c < counts.size() ? counts[c] : 0;
}

// The list's order: towards its class first (spam: largest weight; ham: smallest), ties by hash.
bool Before(const StrongToken& x, const StrongToken& y, bool spam_side) {
  if (x.weight != y.weight) return spam_side ? x.weight > y.weight : x.weight < y.weight;
  return x.hash < y.hash;
}

std::vector<StrongToken> InOrder(std::vector<StrongToken> kept, std::size_t limit, bool spam_side) {
  std::ranges::sort(kept, [spam_side](const StrongToken& x, const StrongToken& y) {
    return Before(x, y, spam_side);
  });
  if (kept.size() > limit) kept.resize(limit);
  return kept;
}

}  // namespace

TokenFigures FiguresOf(std::span<const std::uint64_t> counts, const ModelStats& stats,
                       double alpha) {
  TokenFigures figures;
  const double vocabulary = static_cast<double>(stats.vocabulary_size);
  figures.probabilities.resize(stats.classes.size(), 0.0);
  for (std::size_t c = 0; c < stats.classes.size(); ++c) {
    const double denominator = static_cast<double>(stats.classes[c].tokens) + alpha * vocabulary;
    if (denominator > 0) {
      figures.probabilities[c] = (static_cast<double>(CountAt(counts, c)) + alpha) / denominator;
    }
  }
  const auto spam = stats.FindClass(kSpamLabel);
  const auto ham = stats.FindClass(kHamLabel);
  if (spam && ham && stats.classes[*spam].documents > 0 && stats.classes[*ham].documents > 0) {
    // As the classifier computes it (model/classifier.cc), so that the two agree to the bit.
    const auto log_likelihood = [&](std::size_t c) {
      return std::log(static_cast<double>(CountAt(counts, c)) + alpha) -
             std::log(static_cast<double>(stats.classes[c].tokens) + alpha * vocabulary);
    };
    figures.weight = log_likelihood(*spam) - log_likelihood(*ham);
  }
  return figures;
}

StrongestTokens::StrongestTokens(const ModelStats& stats, double alpha, StrongestOptions options)
    : options_(options), alpha_(alpha) {
  if (options_.min_count == 0) options_.min_count = 1;
  const auto spam = stats.FindClass(kSpamLabel);
  const auto ham = stats.FindClass(kHamLabel);
  if (!spam || !ham || stats.classes[*spam].documents == 0 || stats.classes[*ham].documents == 0) {
    return;
  }
  spam_ = spam;
  ham_ = ham;
  const double vocabulary = static_cast<double>(stats.vocabulary_size);
  log_spam_denominator_ =
      std::log(static_cast<double>(stats.classes[*spam].tokens) + alpha * vocabulary);
  log_ham_denominator_ =
      std::log(static_cast<double>(stats.classes[*ham].tokens) + alpha * vocabulary);
}

void StrongestTokens::Offer(TokenHash hash, std::span<const std::uint64_t> counts) {
  if (!spam_ || options_.limit == 0) return;
  const std::uint64_t spam = CountAt(counts, *spam_);
  const std::uint64_t ham = CountAt(counts, *ham_);
  if (spam + ham < options_.min_count) return;
  ++eligible_;
  const double weight = (std::log(static_cast<double>(spam) + alpha_) - log_spam_denominator_) -
                        (std::log(static_cast<double>(ham) + alpha_) - log_ham_denominator_);
  const StrongToken token{.hash = hash, .spam = spam, .ham = ham, .weight = weight};
  if (weight > 0) Keep(spam_kept_, token, /*spam_side=*/true);
  if (weight < 0) Keep(ham_kept_, token, /*spam_side=*/false);
}

void StrongestTokens::Keep(std::vector<StrongToken>& kept, const StrongToken& token,
                           bool spam_side) {
  kept.push_back(token);
  if (kept.size() >= 2 * options_.limit) kept = InOrder(std::move(kept), options_.limit, spam_side);
}

std::vector<StrongToken> StrongestTokens::Spam() const {
  return InOrder(spam_kept_, options_.limit, /*spam_side=*/true);
}

std::vector<StrongToken> StrongestTokens::Ham() const {
  return InOrder(ham_kept_, options_.limit, /*spam_side=*/false);
}

}  // namespace nbspamd::model
