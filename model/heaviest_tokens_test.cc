// HeaviestTokens against the order it promises: every prefix of a full sort, whatever the order
// of the offers, with many ties.
#include "model/heaviest_tokens.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

namespace nbspamd::model {
namespace {

// `size` tokens, each with a distinct random hash and a weight from a handful of values, so that
// most weights tie with others (and magnitudes tie across signs).
std::vector<WeighedToken> TiedTokens(std::size_t size, std::mt19937_64& random) {
  const double values[] = {-2.5, -1.0, 1.0, 2.5, 0.25, -0.25, 4.0};
  std::vector<WeighedToken> tokens;
  for (std::size_t i = 0; i < size; ++i) {
    const double weight = values[random() % std::size(values)];
    tokens.push_back({i, random(), weight, std::fabs(weight)});
  }
  return tokens;
}

std::vector<std::size_t> Kept(std::size_t keep, const std::vector<WeighedToken>& offers) {
  HeaviestTokens heaviest(keep);
  for (const WeighedToken& token : offers) heaviest.Offer(token.index, token.hash, token.weight);
  std::vector<std::size_t> indexes;
  for (const WeighedToken& token : std::move(heaviest).InOrder()) {
    EXPECT_EQ(token.magnitude, std::fabs(token.weight));
    indexes.push_back(token.index);
  }
  return indexes;
}

TEST(HeaviestTokensTest, KeepsTheFirstInOrderWhateverTheOrderOfOffers) {
  std::mt19937_64 random(7);
  for (std::size_t size : {0u, 1u, 2u, 19u, 20u, 21u, 250u, 1000u, 5000u}) {
    std::vector<WeighedToken> tokens = TiedTokens(size, random);
    std::vector<WeighedToken> sorted = tokens;
    std::sort(sorted.begin(), sorted.end(), ComesBefore);
    for (std::size_t keep : {1u, 3u, 20u, 300u}) {
      std::vector<std::size_t> expected;
      for (std::size_t k = 0; k < std::min(keep, size); ++k) expected.push_back(sorted[k].index);
      for (int shuffle = 0; shuffle < 5; ++shuffle) {
        std::shuffle(tokens.begin(), tokens.end(), random);
        EXPECT_EQ(Kept(keep, tokens), expected) << "size " << size << ", keep " << keep;
      }
    }
  }
}

TEST(HeaviestTokensTest, TiesGoByHashAndSignDoesNotCount) {
  const std::vector<WeighedToken> offers = {
      {0, 30, 1.0, 1.0}, {1, 10, -1.0, 1.0}, {2, 20, 1.0, 1.0}, {3, 5, 0.5, 0.5}, {4, 1, -3, 3}};
  EXPECT_EQ(Kept(3, offers), (std::vector<std::size_t>{4, 1, 2}));
  EXPECT_EQ(Kept(5, offers), (std::vector<std::size_t>{4, 1, 2, 0, 3}));
}

TEST(HeaviestTokensTest, KeepingNoneKeepsNothing) {
  EXPECT_TRUE(Kept(0, {{0, 1, 2.0, 2.0}, {1, 2, 1.0, 1.0}}).empty());
}

}  // namespace
}  // namespace nbspamd::model
