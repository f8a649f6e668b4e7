// Classify: multinomial naive Bayes with Laplace smoothing, from counts to a verdict. No I/O.
//
//   model::Snapshot snapshot = store.Read(bag.entries);
//   auto result = model::Classify(bag, snapshot, {.alpha = 1.0});
//
// The maths (shared/seed-examples.md holds golden numbers):
//   P(c) = N_c / N, P(w|c) = (n_wc + alpha) / (n_c + alpha·|V|),
//   log P(c, x) = log P(c) + Σ_w x_w · log P(w|c) over the tokens seen in some class;
//   posteriors by log-sum-exp. A class with no documents has probability 0.
// Pure and deterministic: the same bag and counts give bit-identical results.
#ifndef NBSPAMD_MODEL_CLASSIFIER_H_
#define NBSPAMD_MODEL_CLASSIFIER_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/token_bag.h"
#include "model/snapshot.h"
#include "model/verdict.h"

namespace nbspamd::model {

inline constexpr std::string_view kSpamLabel = "spam";
inline constexpr std::string_view kHamLabel = "ham";

// What ClassifyResult::score is (docs/ACCURACY.md "The score"; config::Settings::score_form).
enum class ScoreForm {
  // The mean weight of the strong tokens (|weight| > score_min_weight): the daemon's default.
  kMeanWeight,
  // The textbook linear form, log_odds = ln P(spam|x) / P(ham|x): the prior plus every known
  // token's weight, growing with the message's length.
  kLogOdds,
};

struct ClassifyOptions {
  // Laplace smoothing. The daemon requires alpha > 0; 0 (maximum likelihood) is allowed here so
  // that the unsmoothed textbook case can be reproduced.
  double alpha = 1.0;
  // The verdict (model/verdict.h) is spam when score > spam_threshold.
  double spam_threshold = 0.0;
  // The three-way verdict (model/verdict.h) is ham when score <= ham_threshold.
  // REQUIRES: ham_threshold <= spam_threshold.
  double ham_threshold = 0.0;
  // Tokens whose |weight| (see TokenExplanation) is at most this do not count in `score`.
  // 0 counts every known token; the daemon's default is 1 (docs/ACCURACY.md).
  double score_min_weight = 0.0;
  ScoreForm score_form = ScoreForm::kMeanWeight;
  // With ScoreForm::kMeanWeight, the share l in [0, 1) of the words' character n-grams
  // (TokenFamily::kCharNgram) in `score`: each family's own mean of its strong weights, mixed as
  // (1 - l) · words + l · n-grams when both have a strong token, else the one that has. 0 gives
  // the one mean over every strong token, as without n-grams (docs/ACCURACY.md, issue 59).
  double char_ngram_share = 0.0;
  // How many tokens to explain (0 = none).
  std::size_t explain = 0;
};

struct ClassScore {
  std::string label;
  double log_joint = 0;    // log P(c, x); -infinity for a class with no documents.
  double probability = 0;  // P(c | x).
};

// One token's share in the verdict: weight = count · (log P(t|a) − log P(t|b)), where a and b are
// spam and ham when both have documents, else the winning class and the runner-up. Positive
// weights pushed towards a (spam).
struct TokenExplanation {
  std::string token;  // The token text, or its hash in hex when the bag has no texts.
  TokenSource source = TokenSource::kBody;
  std::uint32_t count = 0;
  double weight = 0;
};

struct ClassifyResult {
  std::vector<ClassScore> classes;  // In the model's class order.
  // The most probable class (highest log_joint; the first on a tie), an index into classes.
  std::size_t label_index = 0;
  // ln P(spam|x) / P(ham|x): present when spam and ham both have documents. May be ±infinity only
  // when alpha = 0.
  std::optional<double> log_odds;
  // The ranking value: the mean weight log P(t|spam) − log P(t|ham) of the known token
  // occurrences whose |weight| exceeds options.score_min_weight (0 when none does). It leaves
  // out the prior and the tokens near neutral, and does not grow with message length, so it
  // ranks messages far better than log_odds (bogofilter's min_dev works the same way). The
  // verdict is spam when score > spam_threshold. Present with log_odds. With
  // ScoreForm::kLogOdds it is log_odds instead. options.char_ngram_share mixes two such means.
  std::optional<double> score;
  // spam, unsure or ham from the score and the two thresholds (model/verdict.h); never spam
  // when the label is a third class; unsure when there is no score, and when the message gives
  // no evidence (no token scored; with ScoreForm::kLogOdds, no token known), whatever the
  // thresholds: an empty or image-only message is not ham by the prior alone.
  Verdict verdict = Verdict::kUnsure;
  std::uint64_t scored_tokens = 0;             // The token occurrences counted in score.
  std::uint64_t known_tokens = 0;              // Σ x_w over the tokens seen in some class.
  std::vector<TokenExplanation> explanations;  // Largest |weight| first.

  [[nodiscard]] const std::string& label() const { return classes[label_index].label; }
  // P(spam|x), when a spam class exists.
  [[nodiscard]] std::optional<double> SpamProbability() const;
};

// Scores `bag` against the counts in `snapshot` (read for bag.entries, in that order).
// Errors: kFailedPrecondition when no class has documents (nothing learned yet), or when every
// class is impossible (only with alpha = 0).
[[nodiscard]] std::expected<ClassifyResult, Error> Classify(const TokenBag& bag,
                                                            const Snapshot& snapshot,
                                                            const ClassifyOptions& options);

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_CLASSIFIER_H_
