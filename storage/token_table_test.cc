#include "storage/token_table.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace nbspamd::storage {
namespace {

TokenCounts CountsOf(const TokenTable& table, TokenHash hash, std::size_t classes) {
  TokenCounts counts(classes, 0);
  if (!table.CopyCounts(hash, counts)) return {};
  return counts;
}

TEST(TokenTableTest, SetsUpdatesAndErases) {
  TokenTable table;
  table.Set(7, std::vector<std::uint64_t>{3, 4});
  table.Set(0, std::vector<std::uint64_t>{0, 1});  // Hash 0 is an ordinary token.
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.Get(7), (TokenCounts{3, 4}));
  EXPECT_EQ(table.Get(0), (TokenCounts{0, 1}));
  table.Set(7, std::vector<std::uint64_t>{5, 0});
  EXPECT_EQ(table.Get(7), (TokenCounts{5}));  // Trailing zeros are not kept.
  EXPECT_EQ(CountsOf(table, 7, 2), (TokenCounts{5, 0}));
  EXPECT_EQ(table.size(), 2u);
  table.Set(7, std::vector<std::uint64_t>{0, 0});
  EXPECT_TRUE(table.Get(7).empty());
  EXPECT_FALSE(table.CopyCounts(7, std::span<std::uint64_t>()));
  table.Set(0, std::vector<std::uint64_t>{});
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.Get(0).empty());
}

TEST(TokenTableTest, CopyCountsLeavesClassesTheTokenLacks) {
  TokenTable table;
  table.Set(1, std::vector<std::uint64_t>{9});
  std::uint64_t row[3] = {11, 22, 33};
  ASSERT_TRUE(table.CopyCounts(1, row));
  EXPECT_EQ(row[0], 9u);
  EXPECT_EQ(row[1], 0u);  // An inline token has two counts.
  EXPECT_EQ(row[2], 33u);
  std::uint64_t one[1] = {0};
  ASSERT_TRUE(table.CopyCounts(1, one));
  EXPECT_EQ(one[0], 9u);
}

TEST(TokenTableTest, KeepsCountsThatDoNotFitASlot) {
  TokenTable table;
  const std::uint64_t big = std::uint64_t{1} << 40;
  table.Set(1, std::vector<std::uint64_t>{big, 2});
  table.Set(2, std::vector<std::uint64_t>{1, 2, 3});
  table.Set(3, std::vector<std::uint64_t>{2, 0xFFFFFFFF});           // The marker value itself.
  table.Set(4, std::vector<std::uint64_t>{0xFFFFFFFE, 0xFFFFFFFE});  // Still inline.
  EXPECT_EQ(table.Get(1), (TokenCounts{big, 2}));
  EXPECT_EQ(table.Get(2), (TokenCounts{1, 2, 3}));
  EXPECT_EQ(table.Get(3), (TokenCounts{2, 0xFFFFFFFF}));
  EXPECT_EQ(table.Get(4), (TokenCounts{0xFFFFFFFE, 0xFFFFFFFE}));
  EXPECT_EQ(CountsOf(table, 2, 2), (TokenCounts{1, 2}));
  EXPECT_EQ(CountsOf(table, 1, 4), (TokenCounts{big, 2, 0, 0}));
  const std::size_t with_overflow = table.MemoryBytes();

  // Back to counts that fit: the side entries go.
  table.Set(1, std::vector<std::uint64_t>{1, 2});
  table.Set(2, std::vector<std::uint64_t>{1, 2, 0});
  table.Set(3, std::vector<std::uint64_t>{});
  EXPECT_EQ(table.Get(1), (TokenCounts{1, 2}));
  EXPECT_EQ(table.Get(2), (TokenCounts{1, 2}));
  EXPECT_TRUE(table.Get(3).empty());
  EXPECT_LT(table.MemoryBytes(), with_overflow);
  EXPECT_EQ(table.size(), 3u);
}

TEST(TokenTableTest, GrowsAndStaysAtMostThreeQuartersFull) {
  TokenTable table;
  const std::size_t initial_capacity = table.capacity();
  for (TokenHash hash = 0; hash < 100000; ++hash) {
    table.Set(hash * 64, std::vector<std::uint64_t>{hash + 1, hash % 3});
    ASSERT_LE(table.size() * 4, table.capacity() * 3);
  }
  EXPECT_GT(table.capacity(), initial_capacity);
  EXPECT_EQ(table.size(), 100000u);
  for (TokenHash hash = 0; hash < 100000; ++hash) {
    ASSERT_EQ(CountsOf(table, hash * 64, 2), (TokenCounts{hash + 1, hash % 3})) << hash;
  }
  EXPECT_TRUE(table.Get(64 * 100000).empty());
  // 16-byte slots at most 3/4 full and at least 3/8 full after a doubling.
  EXPECT_LE(table.MemoryBytes(), table.size() * 16 * 8 / 3);
}

TEST(TokenTableTest, ReservedTableDoesNotGrow) {
  TokenTable table(1000);
  const std::size_t capacity = table.capacity();
  EXPECT_FALSE(table.NeedsGrowth(1000));
  EXPECT_TRUE(table.NeedsGrowth(capacity));
  for (TokenHash hash = 1; hash <= 1000; ++hash) table.Set(hash, std::vector<std::uint64_t>{1});
  EXPECT_EQ(table.capacity(), capacity);
}

TEST(TokenTableTest, RehashedSlotsInstallWithEveryToken) {
  TokenTable table;
  for (TokenHash hash = 1; hash <= 10; ++hash) {
    table.Set(hash, std::vector<std::uint64_t>{hash, 1, hash % 2});
  }
  ASSERT_TRUE(table.NeedsGrowth(1000));
  TokenTable::Slots old = table.Install(table.Rehashed(1010));
  EXPECT_FALSE(table.NeedsGrowth(1000));
  for (TokenHash hash = 1; hash <= 10; ++hash) {
    const TokenCounts expected =
        hash % 2 == 0 ? TokenCounts{hash, 1} : TokenCounts{hash, 1, 1};  // Trailing zero dropped.
    EXPECT_EQ(table.Get(hash), expected);
  }
}

// Random sets and erases in a small key space (long probe runs and many backward shifts)
// against std::unordered_map.
TEST(TokenTableTest, MatchesAReferenceMapUnderChurn) {
  std::mt19937_64 random(42);
  TokenTable table;
  std::unordered_map<TokenHash, TokenCounts> reference;
  for (int step = 0; step < 200000; ++step) {
    const TokenHash hash = random() % 3000;
    TokenCounts counts;
    switch (random() % 4) {
      case 0:
        break;  // Erase.
      case 1:
        counts = {random() % 5, random() % 5};
        break;
      case 2:
        counts = {random() % 3, random() % 3, random() % 3};
        break;
      default:
        counts = {random() % 2 == 0 ? random() : random() % 100};
        break;
    }
    table.Set(hash, counts);
    while (!counts.empty() && counts.back() == 0) counts.pop_back();
    if (counts.empty()) {
      reference.erase(hash);
    } else {
      reference[hash] = counts;
    }
    if (step % 10000 == 0 || step == 199999) {
      ASSERT_EQ(table.size(), reference.size()) << step;
      for (TokenHash key = 0; key < 3000; ++key) {
        const auto it = reference.find(key);
        ASSERT_EQ(table.Get(key), it == reference.end() ? TokenCounts{} : it->second)
            << "token " << key << " at step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace nbspamd::storage
