#include "model/classifier.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/log_of_count.h"
#include "model/scoring.h"

namespace nbspamd::model {
namespace {

// The global estimate: P(c) = N_c / N, P(w|c) = (n_wc + alpha) / (n_c + alpha·|V|).
class LaplaceEstimator {
 public:
  LaplaceEstimator(const Snapshot& snapshot, double alpha)
      : snapshot_(snapshot), stats_(*snapshot.stats), alpha_(alpha), log_of_count_(alpha) {
    const double vocabulary = static_cast<double>(stats_.vocabulary_size);
    log_total_documents_ = std::log(static_cast<double>(stats_.TotalDocuments()));
    log_denominators_.resize(stats_.classes.size());
    for (std::size_t c = 0; c < stats_.classes.size(); ++c) {
      log_denominators_[c] =
          std::log(static_cast<double>(stats_.classes[c].tokens) + alpha_ * vocabulary);
    }
  }

  bool HasDocuments(std::size_t c) const { return stats_.classes[c].documents > 0; }
  double LogPrior(std::size_t c) const {
    return std::log(static_cast<double>(stats_.classes[c].documents)) - log_total_documents_;
  }
  bool Known(std::size_t i) const {
    const auto counts = snapshot_.CountsOf(i);
    return std::any_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n != 0; });
  }
  double LogLikelihood(std::size_t i, std::size_t c) const {
    return log_of_count_(snapshot_.CountsOf(i)[c]) - log_denominators_[c];
  }

 private:
  const Snapshot& snapshot_;
  const ModelStats& stats_;
  const double alpha_;
  const LogOfCount log_of_count_;  // log(n_wc + alpha), exactly as std::log gives it.
  double log_total_documents_ = 0;
  std::vector<double> log_denominators_;
};

}  // namespace

std::optional<double> ClassifyResult::SpamProbability() const {
  for (const ClassScore& c : classes) {
    if (c.label == kSpamLabel) return c.probability;
  }
  return std::nullopt;
}

std::expected<ClassifyResult, Error> Classify(const TokenBag& bag, const Snapshot& snapshot,
                                              const ClassifyOptions& options) {
  if (snapshot.stats->TotalDocuments() == 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the model has not learned any message yet: train it first");
  }
  return internal::ScoreWith(bag, *snapshot.stats, LaplaceEstimator(snapshot, options.alpha),
                             options);
}

}  // namespace nbspamd::model
