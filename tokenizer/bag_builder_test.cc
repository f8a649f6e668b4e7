#include "tokenizer/bag_builder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
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

// A hash's family is the one of its first occurrence, and Finish keeps it, with texts or without.
TEST(BagBuilderTest, EachEntryKeepsItsFamily) {
  for (const bool keep_text : {false, true}) {
    SCOPED_TRACE(keep_text);
    BagBuilder builder(1000, keep_text);
    for (int i = 0; i < 300; ++i) {  // Enough for the bucketed sort.
      const std::string word = "w" + std::to_string(i);
      builder.Add(word, TokenSource::kBody);
      builder.Add("#" + word, TokenSource::kBody, TokenFamily::kCharNgram);
      builder.Add("#" + word, TokenSource::kBody);  // A later occurrence does not change it.
    }
    const TokenBag bag = std::move(builder).Finish(false);
    ASSERT_EQ(bag.entries.size(), 600u);
    std::size_t grams = 0;
    for (std::size_t i = 0; i < bag.entries.size(); ++i) {
      if (bag.entries[i].family == TokenFamily::kCharNgram) ++grams;
      if (keep_text) {
        EXPECT_EQ(bag.entries[i].family == TokenFamily::kCharNgram,
                  bag.texts[i].text.starts_with("#"));
      }
    }
    EXPECT_EQ(grams, 300u);
  }
}

// Finish sorts by bucketing the hashes' top bits: every size around its thresholds, and hashes
// made to share their top bits (a bucket too large for its insertion sort), give the bag std::sort
// would, with and without texts, each text still naming its entry.
TEST(BagBuilderTest, BagsOfEverySizeAndCollidingTopBitsAreSorted) {
  std::mt19937_64 random(15);
  for (const std::size_t size : {0, 1, 2, 127, 128, 129, 300, 1000, 4096}) {
    for (const bool shared_top_bits : {false, true}) {
      std::vector<TokenHash> hashes;
      for (std::size_t i = 0; i < size; ++i) {
        const TokenHash hash = random();
        // Half of them in one bucket (top 8 bits 0xab) when sharing.
        hashes.push_back(shared_top_bits && i % 2 == 0 ? (hash >> 8) | (TokenHash{0xab} << 56)
                                                       : hash);
      }
      std::vector<std::string> names;
      for (const TokenHash hash : hashes) names.push_back(std::to_string(hash));
      for (const bool keep_text : {false, true}) {
        BagBuilder builder(1, keep_text);
        for (std::size_t i = 0; i < size; ++i) {
          // Each twice: counted once more, named by its first.
          for (int times = 0; times < 2; ++times) {
            builder.AddOutsideBudget(hashes[i], TokenSource::kBody,
                                     [&] { return std::string_view(names[i]); });
          }
        }
        const TokenBag bag = std::move(builder).Finish(false);
        std::map<TokenHash, std::uint32_t> expected;
        for (const TokenHash hash : hashes) expected[hash] += 2;
        std::vector<BagEntry> entries;
        for (const auto& [hash, count] : expected) entries.push_back({hash, count});
        ASSERT_EQ(bag.entries, entries) << size << (shared_top_bits ? " shared" : "");
        if (!keep_text) continue;
        ASSERT_EQ(bag.texts.size(), bag.entries.size());
        for (std::size_t i = 0; i < bag.entries.size(); ++i) {
          EXPECT_EQ(bag.texts[i].text, std::to_string(bag.entries[i].hash));
        }
      }
    }
  }
}

}  // namespace
}  // namespace nbspamd::tokenizer
