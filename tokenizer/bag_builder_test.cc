#include "tokenizer/bag_builder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/token_hash.h"

namespace nbspamd::tokenizer {
namespace {

// What a bag must be: each hash once, sorted, with its occurrences.
std::vector<BagEntry> Expected(const std::vector<std::string>& tokens, bool boolean_counts) {
  std::map<TokenHash, std::uint32_t> counts;
  for (const std::string& token : tokens) ++counts[HashToken(token)];
  std::vector<BagEntry> entries;
  for (const auto& [hash, count] : counts) entries.push_back({hash, boolean_counts ? 1 : count});
  return entries;
}

TEST(BagBuilderTest, CountsManyTokensThroughTableGrowth) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> word(0, 5000);
  std::vector<std::string> tokens;
  for (int i = 0; i < 40000; ++i) tokens.push_back(std::to_string(word(random)) + "w");
  for (const bool boolean_counts : {false, true}) {
    BagBuilder builder(tokens.size(), /*keep_text=*/false);
    for (const std::string& token : tokens) ASSERT_TRUE(builder.Add(token, TokenSource::kBody));
    const TokenBag bag = std::move(builder).Finish(boolean_counts);
    EXPECT_EQ(bag.entries, Expected(tokens, boolean_counts));
    EXPECT_TRUE(bag.texts.empty());
  }
}

TEST(BagBuilderTest, KeepsOnlyTheFirstMaxTokens) {
  const std::vector<std::string> tokens = {"a", "b", "a", "c", "d", "a"};
  BagBuilder builder(4, /*keep_text=*/false);
  for (const std::string& token : tokens) builder.Add(token, TokenSource::kBody);
  EXPECT_TRUE(builder.Full());
  EXPECT_FALSE(builder.Add("e", TokenSource::kBody));
  const TokenBag bag = std::move(builder).Finish(false);
  EXPECT_EQ(bag.entries, Expected({"a", "b", "a", "c"}, false));
}

TEST(BagBuilderTest, WithTextsTheSameEntriesAndTheFirstTextNamesEach) {
  const std::vector<std::string> tokens = {"x", "subject:x", "x", "y", "x"};
  BagBuilder with_text(100, /*keep_text=*/true);
  BagBuilder without_text(100, /*keep_text=*/false);
  for (const std::string& token : tokens) {
    with_text.Add(token, token.starts_with("subject:") ? TokenSource::kHeader : TokenSource::kBody);
    without_text.Add(token, TokenSource::kBody);
  }
  const TokenBag bag = std::move(with_text).Finish(false);
  EXPECT_EQ(bag.entries, std::move(without_text).Finish(false).entries);
  ASSERT_EQ(bag.texts.size(), bag.entries.size());
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    EXPECT_EQ(HashToken(bag.texts[i].text), bag.entries[i].hash);
  }
}

}  // namespace
}  // namespace nbspamd::tokenizer
