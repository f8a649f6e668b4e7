// Golden tests: the textbook cases of shared/seed-examples.md, reproduced to 1e-9 relative.
#include "model/classifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/hex.h"
#include "tests/support/expect_relative.h"

namespace nbspamd::model {
namespace {

using ::testing::DoubleNear;

// Checks `actual` against a figure of shared/seed-examples.md, printed there to 10 decimals.
void ExpectGolden(double actual, double printed) {
  EXPECT_NEAR(actual, printed, std::max(1e-9 * std::fabs(printed), 5e-11));
}

using test_support::ExpectRelative;

// The counts of the six seed documents (4 spam, 2 ham), in a form the classifier reads.
class SeedModel {
 public:
  SeedModel() {
    counts_ = {{"send", {3, 1}},     {"us", {3, 1}},     {"your", {3, 1}},
               {"password", {2, 1}}, {"review", {1, 2}}, {"account", {1, 0}}};
    auto stats = std::make_shared<ModelStats>();
    stats->classes = {{"spam", 4, 13}, {"ham", 2, 6}};
    stats->vocabulary_size = 6;
    stats_ = stats;
  }

  // A bag of the space-separated words of `text`, hashed by a table local to the test.
  TokenBag Bag(const std::string& text) const {
    std::map<TokenHash, BagEntry> entries;
    std::map<TokenHash, std::string> texts;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find(' ', start);
      if (end == std::string::npos) end = text.size();
      const std::string word = text.substr(start, end - start);
      const TokenHash hash = std::hash<std::string>{}(word);
      entries[hash].hash = hash;
      ++entries[hash].count;
      texts[hash] = word;
      start = end + 1;
    }
    TokenBag bag;
    for (const auto& [hash, entry] : entries) {
      bag.entries.push_back(entry);
      bag.texts.push_back({texts[hash], TokenSource::kBody});
    }
    return bag;
  }

  Snapshot Read(const TokenBag& bag) const {
    Snapshot snapshot{stats_, {}};
    for (const TokenText& token : bag.texts) {
      const auto it = counts_.find(std::string(token.text));
      snapshot.counts.push_back(it == counts_.end() ? 0 : it->second.first);
      snapshot.counts.push_back(it == counts_.end() ? 0 : it->second.second);
    }
    return snapshot;
  }

  ClassifyResult Classify(const std::string& text, ClassifyOptions options) const {
    const TokenBag bag = Bag(text);
    auto result = model::Classify(bag, Read(bag), options);
    EXPECT_TRUE(result.has_value()) << result.error().message;
    return *result;
  }

 private:
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> counts_;
  std::shared_ptr<const ModelStats> stats_;
};

TEST(ClassifierGoldenTest, ReviewAccountWithAddOneSmoothing) {
  const ClassifyResult result = SeedModel().Classify("review account", {.alpha = 1.0});
  ASSERT_EQ(result.classes.size(), 2u);
  const double spam_joint = 2.0 / 19 * 2.0 / 19 * 4.0 / 6;
  const double ham_joint = 3.0 / 12 * 1.0 / 12 * 2.0 / 6;
  ExpectRelative(std::exp(result.classes[0].log_joint), spam_joint);
  ExpectRelative(std::exp(result.classes[1].log_joint), ham_joint);
  ExpectGolden(std::exp(result.classes[0].log_joint), 0.0073868883);
  ExpectGolden(std::exp(result.classes[1].log_joint), 0.0069444444);
  ExpectGolden(result.classes[0].probability, 0.5154362416);
  ExpectGolden(*result.SpamProbability(), 0.5154362416);
  ExpectGolden(result.classes[1].probability, 1 - 0.5154362416);
  ASSERT_TRUE(result.log_odds.has_value());
  ExpectGolden(*result.log_odds, 0.0617645943);
  EXPECT_EQ(result.label(), "spam");
  EXPECT_EQ(result.known_tokens, 2u);
}

// score: the mean weight ln P(t|spam)/P(t|ham) of the tokens with |weight| > score_min_weight.
//   review:  ln((2/19) / (3/12)) = ln(24/57) = -0.8649974375
//   account: ln((2/19) / (1/12)) = ln(24/19) =  0.2336148512
TEST(ClassifierGoldenTest, ScoreIsTheMeanWeightOfTheTokensFarFromNeutral) {
  const SeedModel model;
  const ClassifyResult all = model.Classify("review account", {.alpha = 1.0});
  ExpectRelative(*all.score, (std::log(24.0 / 57) + std::log(24.0 / 19)) / 2);
  ExpectGolden(*all.score, -0.3156912932);
  EXPECT_EQ(all.scored_tokens, 2u);

  const ClassifyResult strong =
      model.Classify("review account", {.alpha = 1.0, .score_min_weight = 0.5});
  ExpectGolden(*strong.score, -0.8649974375);
  EXPECT_EQ(strong.scored_tokens, 1u) << "|0.234| <= 0.5: 'account' leaves the score";

  const ClassifyResult none =
      model.Classify("review account", {.alpha = 1.0, .score_min_weight = 1.0});
  EXPECT_EQ(*none.score, 0.0) << "no token is far enough from neutral";
  EXPECT_EQ(none.scored_tokens, 0u);
  ExpectGolden(*none.log_odds, 0.0617645943);  // The exact log-odds do not change.
}

// The textbook form: the score is the log-odds itself, prior included, whatever the cut.
TEST(ClassifierGoldenTest, TheLogOddsFormScoresTheLogOdds) {
  const SeedModel model;
  const ClassifyResult result = model.Classify(
      "review account", {.alpha = 1.0, .score_min_weight = 1.0, .score_form = ScoreForm::kLogOdds});
  ExpectGolden(*result.score, 0.0617645943);
  EXPECT_EQ(*result.score, *result.log_odds);
}

// Each family its own mean (ClassifyOptions::char_ngram_share): "password" and "account" as a
// word's character n-grams, "review" a word, every token strong (score_min_weight 0):
//   words:    ln(24/57)                          = -0.8649974375
//   n-grams: (ln(24/19) + ln(18/19)) / 2         =  0.0897738150
//   share 1/4: 3/4 · -0.8649974375 + 1/4 · 0.0897738150 = -0.6263046244
// and with share 0 the one mean over all three: -0.2284832692.
TEST(ClassifierGoldenTest, EachFamilyItsOwnMeanMixedByTheShare) {
  const SeedModel model;
  TokenBag bag = model.Bag("review account password");
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    if (bag.texts[i].text != "review") bag.entries[i].family = TokenFamily::kCharNgram;
  }
  const auto mixed = Classify(bag, model.Read(bag), {.alpha = 1.0, .char_ngram_share = 0.25});
  ASSERT_TRUE(mixed.has_value());
  ExpectRelative(*mixed->score, 0.75 * std::log(24.0 / 57) +
                                    0.25 * (std::log(24.0 / 19) + std::log(18.0 / 19)) / 2);
  ExpectGolden(*mixed->score, -0.6263046244);
  EXPECT_EQ(mixed->scored_tokens, 3u);

  const auto pooled = Classify(bag, model.Read(bag), {.alpha = 1.0});
  ASSERT_TRUE(pooled.has_value());
  ExpectGolden(*pooled->score, -0.2284832692);
  ExpectGolden(*pooled->log_odds, *mixed->log_odds);  // The families change the score alone.

  // No strong n-gram (|0.234|, |0.054| <= 0.5): the words' mean alone, whatever the share.
  const auto words_only = Classify(
      bag, model.Read(bag), {.alpha = 1.0, .score_min_weight = 0.5, .char_ngram_share = 0.25});
  ASSERT_TRUE(words_only.has_value());
  ExpectGolden(*words_only->score, -0.8649974375);
  EXPECT_EQ(words_only->scored_tokens, 1u);

  // No strong word: the n-grams' mean alone.
  for (BagEntry& entry : bag.entries) {
    entry.family =
        entry.family == TokenFamily::kWord ? TokenFamily::kCharNgram : TokenFamily::kWord;
  }
  const auto grams_only = Classify(
      bag, model.Read(bag), {.alpha = 1.0, .score_min_weight = 0.5, .char_ngram_share = 0.25});
  ASSERT_TRUE(grams_only.has_value());
  ExpectGolden(*grams_only->score, -0.8649974375);
}

TEST(ClassifierGoldenTest, UnseenTokenIsSkipped) {
  const ClassifyResult result = SeedModel().Classify("review us now", {.alpha = 1.0});
  ExpectRelative(std::exp(result.classes[0].log_joint), 2.0 / 19 * 4.0 / 19 * 4.0 / 6);
  ExpectRelative(std::exp(result.classes[1].log_joint), 3.0 / 12 * 2.0 / 12 * 2.0 / 6);
  ExpectGolden(std::exp(result.classes[0].log_joint), 0.0147737765);
  ExpectGolden(std::exp(result.classes[1].log_joint), 0.0138888889);
  ExpectGolden(*result.SpamProbability(), 0.5154362416);
  ExpectGolden(*result.log_odds, 0.0617645943);
  EXPECT_EQ(result.known_tokens, 2u) << "'now' was never seen and must not count";
}

TEST(ClassifierGoldenTest, MaximumLikelihoodWithoutSmoothing) {
  const ClassifyResult result = SeedModel().Classify("review us now", {.alpha = 0.0});
  ExpectRelative(std::exp(result.classes[0].log_joint), 1.0 / 13 * 3.0 / 13 * 4.0 / 6);
  ExpectRelative(std::exp(result.classes[1].log_joint), 2.0 / 6 * 1.0 / 6 * 2.0 / 6);
  ExpectGolden(std::exp(result.classes[0].log_joint), 0.0118343195);
  ExpectGolden(std::exp(result.classes[1].log_joint), 0.0185185185);
  ExpectGolden(*result.SpamProbability(), 0.3898916968);
  EXPECT_EQ(result.label(), "ham");
}

TEST(ClassifierGoldenTest, ZeroCountWithoutSmoothingMakesHamImpossible) {
  const ClassifyResult result = SeedModel().Classify("review account", {.alpha = 0.0});
  EXPECT_EQ(result.classes[1].log_joint, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(*result.SpamProbability(), 1.0);
  EXPECT_EQ(result.classes[1].probability, 0.0);
  EXPECT_EQ(*result.log_odds, std::numeric_limits<double>::infinity());
  EXPECT_EQ(result.label(), "spam");
}

TEST(ClassifierGoldenTest, LinearFormExplainsTheVerdict) {
  const ClassifyResult result =
      SeedModel().Classify("review account", {.alpha = 1.0, .explain = 10});
  ASSERT_EQ(result.explanations.size(), 2u);
  EXPECT_EQ(result.explanations[0].token, "review");
  ExpectGolden(result.explanations[0].weight, -0.8649974374);
  EXPECT_EQ(result.explanations[1].token, "account");
  ExpectGolden(result.explanations[1].weight, 0.2336148511);
  const double bias = std::log(4.0 / 6) - std::log(2.0 / 6);
  ExpectGolden(bias, 0.6931471806);
  ExpectRelative(bias + result.explanations[0].weight + result.explanations[1].weight,
                 *result.log_odds);
}

TEST(ClassifierTest, ExplainKeepsTheLargestWeightsAndScalesByCount) {
  const ClassifyResult result =
      SeedModel().Classify("review review account send", {.alpha = 1.0, .explain = 1});
  ASSERT_EQ(result.explanations.size(), 1u);
  EXPECT_EQ(result.explanations[0].token, "review");
  EXPECT_EQ(result.explanations[0].count, 2u);
  ExpectGolden(result.explanations[0].weight, 2 * -0.8649974374);
}

TEST(ClassifierTest, ExplainBreaksTiesByHashAndAnyLengthIsAPrefixOfTheWhole) {
  // send, us and your have the same counts, so the same weight.
  const std::string text = "your us send password review account";
  const ClassifyResult whole = SeedModel().Classify(text, {.alpha = 1.0, .explain = 6});
  ASSERT_EQ(whole.explanations.size(), 6u);
  std::vector<std::string> tied;
  for (const TokenExplanation& token : whole.explanations) {
    if (token.token == "send" || token.token == "us" || token.token == "your") {
      tied.push_back(token.token);
    }
  }
  std::vector<std::string> by_hash = {"send", "us", "your"};
  std::sort(by_hash.begin(), by_hash.end(), [](const std::string& a, const std::string& b) {
    return std::hash<std::string>{}(a) < std::hash<std::string>{}(b);
  });
  EXPECT_EQ(tied, by_hash);
  // The same tokens in the same order from the bag without its texts, named by their hashes.
  TokenBag bag = SeedModel().Bag(text);
  const Snapshot snapshot = SeedModel().Read(bag);
  bag.texts = {};
  const auto without_texts = model::Classify(bag, snapshot, {.alpha = 1.0, .explain = 6});
  ASSERT_TRUE(without_texts.has_value());
  ASSERT_EQ(without_texts->explanations.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) {
    std::string hex;
    AppendHex(hex, std::hash<std::string>{}(whole.explanations[k].token), 16);
    EXPECT_EQ(without_texts->explanations[k].token, hex) << k;
    EXPECT_EQ(without_texts->explanations[k].weight, whole.explanations[k].weight) << k;
  }
  for (std::size_t keep = 1; keep < 6; ++keep) {
    const ClassifyResult part = SeedModel().Classify(text, {.alpha = 1.0, .explain = keep});
    ASSERT_EQ(part.explanations.size(), keep);
    for (std::size_t k = 0; k < keep; ++k) {
      EXPECT_EQ(part.explanations[k].token, whole.explanations[k].token) << keep << " " << k;
      EXPECT_EQ(part.explanations[k].weight, whole.explanations[k].weight);
    }
  }
}

TEST(ClassifierTest, EmptyModelIsAnError) {
  auto stats = std::make_shared<ModelStats>();
  stats->classes = {{"spam", 0, 0}, {"ham", 0, 0}};
  const auto result = Classify(TokenBag{}, Snapshot{stats, {}}, {});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kFailedPrecondition);
}

TEST(ClassifierTest, ClassWithoutDocumentsHasProbabilityZero) {
  auto stats = std::make_shared<ModelStats>();
  stats->classes = {{"spam", 3, 10}, {"ham", 0, 0}};
  stats->vocabulary_size = 4;
  TokenBag bag;
  bag.entries = {{7, 1}};
  const auto result = Classify(bag, Snapshot{stats, {5, 0}}, {});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->label(), "spam");
  EXPECT_EQ(*result->SpamProbability(), 1.0);
  EXPECT_FALSE(result->log_odds.has_value()) << "log-odds needs both classes";
}

TEST(ClassifierTest, MessageUnseenByAClassStillGetsAFiniteScore) {
  auto stats = std::make_shared<ModelStats>();
  stats->classes = {{"spam", 1, 3}, {"ham", 1, 3}};
  stats->vocabulary_size = 6;
  TokenBag bag;
  bag.entries = {{1, 1}, {2, 1}};
  // Token 1 only in spam, token 2 only in spam.
  const auto result = Classify(bag, Snapshot{stats, {2, 0, 1, 0}}, {.alpha = 1.0});
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(std::isfinite(result->classes[1].log_joint));
  EXPECT_TRUE(std::isfinite(*result->log_odds));
  ExpectRelative(*result->log_odds, std::log(3.0 / 9 * 2.0 / 9) - std::log(1.0 / 9 * 1.0 / 9));
}

// One token, counted `counts` times in spam, ham and newsletter (1, 1 and 2 documents).
std::expected<ClassifyResult, Error> ClassifyWithANewsletterClass(
    std::vector<std::uint64_t> counts) {
  auto stats = std::make_shared<ModelStats>();
  stats->classes = {{"spam", 1, 2}, {"ham", 1, 2}, {"newsletter", 2, 4}};
  stats->vocabulary_size = 3;
  TokenBag bag;
  bag.entries = {{9, 1}};
  return Classify(bag, Snapshot{stats, std::move(counts)}, {});
}

TEST(ClassifierTest, AnyNumberOfClasses) {
  const auto result = ClassifyWithANewsletterClass({0, 0, 4});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->label(), "newsletter");
  double total = 0;
  for (const ClassScore& c : result->classes) total += c.probability;
  EXPECT_THAT(total, DoubleNear(1.0, 1e-12));
}

TEST(ClassifierTest, TheThresholdAppliesToTheScoreNotTheLabel) {
  SeedModel model;
  // The score is -0.3157 (ScoreIsTheMeanWeightOfTheTokensFarFromNeutral).
  const ClassifyResult low = model.Classify(
      "review account", {.alpha = 1.0, .spam_threshold = -0.32, .ham_threshold = -1});
  EXPECT_EQ(low.verdict, Verdict::kSpam);
  const ClassifyResult high = model.Classify(
      "review account", {.alpha = 1.0, .spam_threshold = -0.31, .ham_threshold = -1});
  EXPECT_EQ(high.verdict, Verdict::kUnsure);
  EXPECT_EQ(low.label(), "spam") << "the label is the most probable class either way";
  EXPECT_EQ(high.label(), "spam");
}

// "review account" scores -0.3156912932 (ScoreIsTheMeanWeightOfTheTokensFarFromNeutral).
TEST(ClassifierVerdictTest, ThreeVerdictsFromTwoThresholds) {
  SeedModel model;
  const auto verdict = [&](double ham_threshold, double spam_threshold) {
    const ClassifyResult result = model.Classify(
        "review account",
        {.alpha = 1.0, .spam_threshold = spam_threshold, .ham_threshold = ham_threshold});
    ExpectGolden(*result.score, -0.3156912932);
    return result.verdict;
  };
  EXPECT_EQ(verdict(-1.0, -0.4), Verdict::kSpam);    // -0.3157 > -0.4.
  EXPECT_EQ(verdict(-1.0, -0.3), Verdict::kUnsure);  // -1 < -0.3157 <= -0.3.
  EXPECT_EQ(verdict(-0.3, 0.0), Verdict::kHam);      // -0.3157 <= -0.3.
  EXPECT_EQ(verdict(-1.0, 1.0), Verdict::kUnsure);   // A wide unsure band.
  EXPECT_EQ(verdict(0.5, 0.5), Verdict::kHam);       // Equal thresholds: two-way, no unsure.
  EXPECT_EQ(verdict(-0.5, -0.5), Verdict::kSpam);    // Equal thresholds: two-way, no unsure.
}

TEST(ClassifierVerdictTest, BoundsAreHamAtOrBelowSpamAbove) {
  SeedModel model;
  const double score = *model.Classify("review account", {.alpha = 1.0}).score;
  // A score equal to the ham threshold is ham; equal to the spam threshold is not spam.
  EXPECT_EQ(
      model.Classify("review account", {.spam_threshold = score, .ham_threshold = score}).verdict,
      Verdict::kHam);
  EXPECT_EQ(
      model.Classify("review account", {.spam_threshold = score, .ham_threshold = -1}).verdict,
      Verdict::kUnsure);
}

TEST(ClassifierVerdictTest, TheLabelIsTheMostProbableClass) {
  SeedModel model;
  const ClassifyResult result = model.Classify(
      "review account", {.alpha = 1.0, .spam_threshold = 0.04, .ham_threshold = 0.0});
  EXPECT_EQ(result.label(), "spam") << "P(spam|x) = 0.515";
  EXPECT_EQ(result.verdict, Verdict::kHam) << "the score, -0.3157, is at most 0";
}

TEST(ClassifierVerdictTest, NoScoreIsUnsure) {
  auto stats = std::make_shared<ModelStats>();
  stats->classes = {{"spam", 3, 10}, {"ham", 0, 0}};
  stats->vocabulary_size = 4;
  TokenBag bag;
  bag.entries = {{7, 1}};
  const auto result = Classify(bag, Snapshot{stats, {5, 0}}, {});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->label(), "spam");
  EXPECT_FALSE(result->score.has_value());
  EXPECT_EQ(result->verdict, Verdict::kUnsure) << "one class alone is no evidence either way";
}

// A message with no evidence is unsure whatever the thresholds: with the seeds, "now" and "later"
// were never seen, so only the prior speaks (log-odds ln(4/2) = 0.6931471806, spam) and the mean
// form has nothing to average (score 0, which thresholds at 0 would call ham).
TEST(ClassifierVerdictTest, NoEvidenceIsUnsure) {
  const SeedModel model;
  const ClassifyResult mean =
      model.Classify("now later", {.alpha = 1.0, .spam_threshold = 0.0, .ham_threshold = 0.0});
  EXPECT_EQ(*mean.score, 0.0);
  EXPECT_EQ(mean.known_tokens, 0u);
  EXPECT_EQ(mean.verdict, Verdict::kUnsure);
  const ClassifyResult log_odds = model.Classify(
      "now later", {.alpha = 1.0, .spam_threshold = 0.5, .score_form = ScoreForm::kLogOdds});
  ExpectGolden(*log_odds.score, 0.6931471806);
  EXPECT_EQ(log_odds.verdict, Verdict::kUnsure) << "0.69 > 0.5, but the prior alone is no evidence";
  // Known tokens none of which is strong: no evidence for the mean, evidence for the log-odds.
  const ClassifyResult weak = model.Classify(
      "review account", {.alpha = 1.0, .spam_threshold = 0.0, .score_min_weight = 1.0});
  EXPECT_EQ(weak.scored_tokens, 0u);
  EXPECT_EQ(weak.verdict, Verdict::kUnsure);
  const ClassifyResult weak_log_odds =
      model.Classify("review account", {.alpha = 1.0,
                                        .spam_threshold = 0.0,
                                        .score_min_weight = 1.0,
                                        .score_form = ScoreForm::kLogOdds});
  EXPECT_EQ(weak_log_odds.verdict, Verdict::kSpam) << "log-odds 0.0618 > 0, from two known tokens";
  // One strong token is evidence: "review" alone, weight ln(2/19 / (3/12)) = -0.8649974375.
  const ClassifyResult one = model.Classify(
      "review now",
      {.alpha = 1.0, .spam_threshold = 0.0, .ham_threshold = 0.0, .score_min_weight = 0.5});
  ExpectGolden(*one.score, -0.8649974375);
  EXPECT_EQ(one.verdict, Verdict::kHam);
}

TEST(ClassifierVerdictTest, AThirdClassIsNeverASpamVerdict) {
  // The token is in spam (3) more than in ham (1), but newsletter (4) wins.
  const auto result = ClassifyWithANewsletterClass({3, 1, 4});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->label(), "newsletter");
  EXPECT_GT(*result->score, 0);
  EXPECT_EQ(result->verdict, Verdict::kUnsure);
}

TEST(ClassifierVerdictTest, Names) {
  EXPECT_EQ(VerdictName(Verdict::kSpam), "spam");
  EXPECT_EQ(VerdictName(Verdict::kUnsure), "unsure");
  EXPECT_EQ(VerdictName(Verdict::kHam), "ham");
  EXPECT_EQ(DecideVerdict(std::nullopt, {.spam = 1, .ham = 0}, false), Verdict::kUnsure);
  EXPECT_EQ(DecideVerdict(-0.1, {.spam = 1, .ham = 0}, false), Verdict::kHam);
  EXPECT_EQ(DecideVerdict(0.1, {.spam = 1, .ham = 0}, false), Verdict::kUnsure);
  EXPECT_EQ(DecideVerdict(1.1, {.spam = 1, .ham = 0}, false), Verdict::kSpam);
  EXPECT_EQ(DecideVerdict(1.1, {.spam = 1, .ham = 0}, true), Verdict::kUnsure);
  EXPECT_EQ(DecideVerdict(-0.1, {.spam = 1, .ham = 0}, true), Verdict::kHam);
}

TEST(ClassifierTest, DeterministicToTheBit) {
  SeedModel model;
  const auto a = model.Classify("send us your review", {.alpha = 0.5});
  const auto b = model.Classify("send us your review", {.alpha = 0.5});
  EXPECT_EQ(a.classes[0].log_joint, b.classes[0].log_joint);
  EXPECT_EQ(*a.log_odds, *b.log_odds);
}

}  // namespace
}  // namespace nbspamd::model
