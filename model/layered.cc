#include "model/layered.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/scoring.h"

namespace nbspamd::model {
namespace {

class LayeredEstimator {
 public:
  LayeredEstimator(const Snapshot& global, const Snapshot& user, double alpha,
                   const LayerOptions& layer)
      : global_(global),
        user_(user),
        global_stats_(*global.stats),
        user_stats_(*user.stats),
        alpha_(alpha),
        beta_(layer.beta) {
    const std::size_t classes = global_stats_.classes.size();
    const double vocabulary = static_cast<double>(global_stats_.vocabulary_size);
    const double total = static_cast<double>(global_stats_.TotalDocuments());
    const double user_total = static_cast<double>(user_stats_.TotalDocuments());
    global_denominators_.resize(classes);
    log_user_denominators_.resize(classes);
    log_priors_.resize(classes);
    for (std::size_t c = 0; c < classes; ++c) {
      const ClassStats& g = global_stats_.classes[c];
      const ClassStats& u = user_stats_.classes[c];
      global_denominators_[c] = static_cast<double>(g.tokens) + alpha_ * vocabulary;
      log_user_denominators_[c] = std::log(static_cast<double>(u.tokens) + beta_);
      const double global_prior = static_cast<double>(g.documents) / total;
      log_priors_[c] = std::log(static_cast<double>(u.documents) + layer.gamma * global_prior) -
                       std::log(user_total + layer.gamma);
    }
  }

  bool HasDocuments(std::size_t c) const {
    return global_stats_.classes[c].documents > 0 || user_stats_.classes[c].documents > 0;
  }
  double LogPrior(std::size_t c) const { return log_priors_[c]; }
  bool Known(std::size_t i) const {
    const auto any = [](std::span<const std::uint64_t> counts) {
      return std::any_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n != 0; });
    };
    return any(global_.CountsOf(i)) || any(user_.CountsOf(i));
  }
  double LogLikelihood(std::size_t i, std::size_t c) const {
    const double global_estimate =
        (static_cast<double>(global_.CountsOf(i)[c]) + alpha_) / global_denominators_[c];
    return std::log(static_cast<double>(user_.CountsOf(i)[c]) + beta_ * global_estimate) -
           log_user_denominators_[c];
  }

 private:
  const Snapshot& global_;
  const Snapshot& user_;
  const ModelStats& global_stats_;
  const ModelStats& user_stats_;
  const double alpha_;
  const double beta_;
  std::vector<double> global_denominators_;
  std::vector<double> log_user_denominators_;
  std::vector<double> log_priors_;
};

}  // namespace

std::expected<ClassifyResult, Error> ClassifyLayered(const TokenBag& bag, const Snapshot& global,
                                                     const Snapshot& user,
                                                     const ClassifyOptions& options,
                                                     const LayerOptions& layer) {
  const ModelStats& global_stats = *global.stats;
  const ModelStats& user_stats = *user.stats;
  if (global_stats.TotalDocuments() == 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the model has not learned any message yet: train it first");
  }
  if (user_stats.classes.size() != global_stats.classes.size() ||
      !std::equal(user_stats.classes.begin(), user_stats.classes.end(),
                  global_stats.classes.begin(),
                  [](const ClassStats& u, const ClassStats& g) { return u.label == g.label; })) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a user layer must have the global model's classes, in its order");
  }
  // No feedback of the user's own: exactly the global model.
  if (user_stats.TotalDocuments() == 0) return Classify(bag, global, options);
  return internal::ScoreWith(bag, global_stats,
                             LayeredEstimator(global, user, options.alpha, layer), options);
}

}  // namespace nbspamd::model
