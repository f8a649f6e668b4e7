// Layered classification: a user's (or a domain's) own counts over the global model, with the
// global estimate as the Dirichlet prior of the user's (docs/API.md). No I/O.
//
//   P(w | c, u) = (n_wcu + β · P_g(w | c)) / (n_cu + β),   P_g(w | c) = (n_wc + α) / (n_c + α·|V|)
//   P(c | u)    = (N_cu + γ · P_g(c)) / (N_u + γ),         P_g(c) = N_c / N
//
// n_wcu, n_cu, N_cu and N_u are counted from the user's own feedback; n_wc, n_c, N_c, N and |V|
// are the global model's. β is how many tokens of the user's own evidence it takes to weigh as
// much as the global model's word distribution, γ the same in documents for the prior. A user
// with no documents scores exactly (to the bit) as the global model; as β, γ → ∞ the estimate
// tends to the global one, as β, γ → 0 to the user's own maximum-likelihood one. A token seen in
// no class of either layer is skipped, as in Classify; a token only the user has seen gets the
// global estimate of an unseen token, α / (n_c + α·|V|), as its prior mean. The score, verdict and
// explanations are those of Classify, computed from these estimates.
//
//   auto result = model::ClassifyLayered(bag, global_snapshot, user_snapshot,
//                                        {.alpha = 0.1}, {.beta = 1000, .gamma = 1});
#ifndef NBSPAMD_MODEL_LAYERED_H_
#define NBSPAMD_MODEL_LAYERED_H_

#include <expected>

#include "common/error.h"
#include "common/token_bag.h"
#include "model/classifier.h"
#include "model/snapshot.h"

namespace nbspamd::model {

// The defaults come from the cold-start measurement (docs/ACCURACY.md, "Per-user layers"): β 1000
// ranked best over the four user streams (geometric mean ratio to the best other way 0.52); γ
// moves only `label` and the probabilities (the score ignores the prior), and 1 was as good as or
// better than 5, 20, 100 and 1000 at every point.
struct LayerOptions {
  double beta = 1000;  // Token pseudo-counts of the global prior. REQUIRES: > 0.
  double gamma = 1;    // Document pseudo-counts of the global prior. REQUIRES: > 0.
};

// Scores `bag` with `user`'s layer over `global`, both read for bag.entries in that order.
// `user.stats` holds the user's own per-class documents and tokens (its vocabulary_size is not
// used). Errors: kFailedPrecondition when the global model has no documents (as Classify);
// kInvalidArgument when the layers' classes differ (labels and order must be the global's).
[[nodiscard]] std::expected<ClassifyResult, Error> ClassifyLayered(const TokenBag& bag,
                                                                   const Snapshot& global,
                                                                   const Snapshot& user,
                                                                   const ClassifyOptions& options,
                                                                   const LayerOptions& layer);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_LAYERED_H_
