// The layered estimate (layered.h): hand-computed golden numbers for the seed model of
// shared/seed-examples.md with a one-message user layer, exact equality with the global model
// for a user without feedback, and the limits β, γ → ∞ (the global model) and → 0 (the user's
// own maximum-likelihood model).
#include "model/layered.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "tests/support/expect_relative.h"
#include "tests/support/token_bags.h"

namespace nbspamd::model {
namespace {

using test_support::BagOfWords;

using Counts = std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>;  // spam, ham.

using test_support::ExpectRelative;

Snapshot Read(const TokenBag& bag, const Counts& counts, ModelStats stats) {
  Snapshot snapshot{std::make_shared<const ModelStats>(std::move(stats)), {}};
  for (const TokenText& token : bag.texts) {
    const auto it = counts.find(std::string(token.text));
    snapshot.counts.push_back(it == counts.end() ? 0 : it->second.first);
    snapshot.counts.push_back(it == counts.end() ? 0 : it->second.second);
  }
  return snapshot;
}

// The six seed documents: 4 spam (13 tokens), 2 ham (6 tokens), |V| = 6.
Snapshot Global(const TokenBag& bag) {
  const Counts counts = {{"send", {3, 1}},     {"us", {3, 1}},     {"your", {3, 1}},
                         {"password", {2, 1}}, {"review", {1, 2}}, {"account", {1, 0}}};
  ModelStats stats;
  stats.classes = {{"spam", 4, 13}, {"ham", 2, 6}};
  stats.vocabulary_size = 6;
  return Read(bag, counts, stats);
}

// A user who learned one message, "send your account", as ham.
Snapshot OneHamUser(const TokenBag& bag) {
  const Counts counts = {{"send", {0, 1}}, {"your", {0, 1}}, {"account", {0, 1}}};
  ModelStats stats;
  stats.classes = {{"spam", 0, 0}, {"ham", 1, 3}};
  return Read(bag, counts, stats);
}

ClassifyResult Layered(const TokenBag& bag, const Snapshot& user, LayerOptions layer,
                       ClassifyOptions options = {.alpha = 1.0}) {
  auto result = ClassifyLayered(bag, Global(bag), user, options, layer);
  EXPECT_TRUE(result.has_value()) << result.error().message;
  return *result;
}

// α = 1, β = 2, γ = 1, "review account":
//   P_g(review|spam) = 2/19, P_g(account|spam) = 2/19, P_g(review|ham) = 3/12,
//   P_g(account|ham) = 1/12 (the seed's add-one estimates), P_g(spam) = 4/6, P_g(ham) = 2/6.
//   spam, n_cu = 0: P(review|spam,u) = (0 + 2·2/19) / (0 + 2) = 2/19, P(account|spam,u) = 2/19.
//   ham, n_cu = 3:  P(review|ham,u) = (0 + 2·3/12) / (3 + 2) = 1/10,
//                   P(account|ham,u) = (1 + 2·1/12) / (3 + 2) = 7/30.
//   P(spam|u) = (0 + 1·4/6) / (1 + 1) = 1/3, P(ham|u) = (1 + 1·2/6) / (1 + 1) = 2/3.
//   joint spam = 1/3 · 2/19 · 2/19 = 4/1083 = 0.0036934441
//   joint ham  = 2/3 · 1/10 · 7/30 = 7/450  = 0.0155555556
//   P(spam | x) = 0.1918771986, log-odds = -1.4378584522
//   weights: review ln((2/19)/(1/10)) = 0.0512932944, account ln((2/19)/(7/30)) = -0.7960045660,
//   score (every token) = -0.3723556358.
// The global model alone calls the message spam (P 0.5154362416); this user's one ham turns it.
TEST(LayeredGoldenTest, OneHamOfTheUserTurnsTheVerdict) {
  const TokenBag bag = BagOfWords("review account");
  const ClassifyResult result = Layered(bag, OneHamUser(bag), {.beta = 2, .gamma = 1});
  ExpectRelative(std::exp(result.classes[0].log_joint), 4.0 / 1083);
  ExpectRelative(std::exp(result.classes[1].log_joint), 7.0 / 450);
  EXPECT_NEAR(result.classes[0].probability, 0.1918771986, 1e-10);
  EXPECT_NEAR(*result.log_odds, -1.4378584522, 1e-10);
  EXPECT_NEAR(*result.score, -0.3723556358, 1e-10);
  EXPECT_EQ(result.label(), "ham");
  EXPECT_EQ(result.known_tokens, 2u);

  // The explanation shows each token's weight under the layered estimate.
  const ClassifyResult explained =
      Layered(bag, OneHamUser(bag), {.beta = 2, .gamma = 1}, {.alpha = 1.0, .explain = 2});
  ASSERT_EQ(explained.explanations.size(), 2u);
  EXPECT_EQ(explained.explanations[0].token, "account");
  EXPECT_NEAR(explained.explanations[0].weight, -0.7960045660, 1e-10);
  EXPECT_EQ(explained.explanations[1].token, "review");
  EXPECT_NEAR(explained.explanations[1].weight, 0.0512932944, 1e-10);
}

// A token only the user has seen is known, with the global estimate of an unseen token as its
// prior mean: "now", learned once as ham by the user (ham n_cu = 1, N_cu = 1), β = 2, γ = 1:
//   P(now|spam,u) = (0 + 2·1/19) / (0 + 2) = 1/19,  P(now|ham,u) = (1 + 2·1/12) / (1 + 2) = 7/18,
//   P(spam|u) = 1/3, P(ham|u) = 2/3: joint spam 1/57, joint ham 7/27.
TEST(LayeredGoldenTest, ATokenOnlyTheUserSawCounts) {
  const TokenBag bag = BagOfWords("now");
  ModelStats stats;
  stats.classes = {{"spam", 0, 0}, {"ham", 1, 1}};
  const Snapshot user = Read(bag, {{"now", {0, 1}}}, stats);
  const ClassifyResult result = Layered(bag, user, {.beta = 2, .gamma = 1});
  EXPECT_EQ(result.known_tokens, 1u);
  ExpectRelative(std::exp(result.classes[0].log_joint), 1.0 / 57);
  ExpectRelative(std::exp(result.classes[1].log_joint), 7.0 / 27);
}

TEST(LayeredTest, AUserWithoutFeedbackScoresExactlyAsTheGlobalModel) {
  for (const char* text : {"review account", "review us now", "send us your password"}) {
    const TokenBag bag = BagOfWords(text);
    ModelStats empty;
    empty.classes = {{"spam", 0, 0}, {"ham", 0, 0}};
    const ClassifyOptions options{.alpha = 1.0, .score_min_weight = 0.1, .explain = 3};
    const ClassifyResult layered =
        *ClassifyLayered(bag, Global(bag), Read(bag, {}, empty), options, {.beta = 5, .gamma = 5});
    const ClassifyResult global = *Classify(bag, Global(bag), options);
    ASSERT_EQ(layered.classes.size(), global.classes.size());
    for (std::size_t c = 0; c < global.classes.size(); ++c) {
      EXPECT_EQ(layered.classes[c].log_joint, global.classes[c].log_joint) << text;
      EXPECT_EQ(layered.classes[c].probability, global.classes[c].probability) << text;
    }
    EXPECT_EQ(layered.score, global.score) << text;
    EXPECT_EQ(layered.log_odds, global.log_odds) << text;
    ASSERT_EQ(layered.explanations.size(), global.explanations.size());
    for (std::size_t e = 0; e < global.explanations.size(); ++e) {
      EXPECT_EQ(layered.explanations[e].weight, global.explanations[e].weight);
    }
  }
}

TEST(LayeredTest, LargeBetaAndGammaTendToTheGlobalModel) {
  const TokenBag bag = BagOfWords("review account send");
  const ClassifyResult global = *Classify(bag, Global(bag), {.alpha = 1.0});
  const ClassifyResult layered = Layered(bag, OneHamUser(bag), {.beta = 1e12, .gamma = 1e12});
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_NEAR(layered.classes[c].log_joint, global.classes[c].log_joint, 1e-9);
  }
  EXPECT_NEAR(*layered.score, *global.score, 1e-9);
}

// With β, γ → 0 the user's own counts decide: their maximum-likelihood estimate. A user who
// learned 2 spam (review 1, account 2; 5 tokens) and 3 ham (review 3, account 1; 6 tokens):
//   joint spam = 2/5 · 1/5 · 2/5 = 0.032, joint ham = 3/5 · 3/6 · 1/6 = 0.05.
TEST(LayeredTest, SmallBetaAndGammaTendToTheUsersOwnModel) {
  const TokenBag bag = BagOfWords("review account");
  ModelStats stats;
  stats.classes = {{"spam", 2, 5}, {"ham", 3, 6}};
  const Snapshot user = Read(bag, {{"review", {1, 3}}, {"account", {2, 1}}}, stats);
  const ClassifyResult result = Layered(bag, user, {.beta = 1e-12, .gamma = 1e-12});
  ExpectRelative(std::exp(result.classes[0].log_joint), 2.0 / 5 * 1.0 / 5 * 2.0 / 5);
  ExpectRelative(std::exp(result.classes[1].log_joint), 3.0 / 5 * 3.0 / 6 * 1.0 / 6);
}

TEST(LayeredTest, ErrorsOfTheInputs) {
  const TokenBag bag = BagOfWords("review");
  ModelStats other;
  other.classes = {{"ham", 1, 1}, {"spam", 0, 0}};
  const auto mismatched =
      ClassifyLayered(bag, Global(bag), Read(bag, {}, other), {.alpha = 1.0}, {});
  ASSERT_FALSE(mismatched.has_value());
  EXPECT_EQ(mismatched.error().code, ErrorCode::kInvalidArgument);

  ModelStats empty;
  empty.classes = {{"spam", 0, 0}, {"ham", 0, 0}};
  const auto nothing =
      ClassifyLayered(bag, Read(bag, {}, empty), OneHamUser(bag), {.alpha = 1.0}, {});
  ASSERT_FALSE(nothing.has_value());
  EXPECT_EQ(nothing.error().code, ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace nbspamd::model
