#include "storage/count_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <random>
#include <thread>

namespace nbspamd::storage {
namespace {

// Small test keys spread over every shard (a shard is chosen by a hash's top bits): the key's low
// bits become the top ones. Unspread undoes it.
TokenHash Spread(TokenHash key) { return std::rotr(key, 6); }
TokenHash Unspread(TokenHash hash) { return std::rotl(hash, 6); }

model::ModelStats StatsWithTotal(std::uint64_t total) {
  model::ModelStats stats;
  stats.classes = {{"spam", total, total}};
  stats.vocabulary_size = 2;
  return stats;
}

// A writer moves counts between two tokens while readers check that every snapshot is of one
// published state: the two counts always add up to the class total.
TEST(CountCacheTest, ReadersNeverSeeAHalfPublishedState) {
  CountCache cache(StatsWithTotal(100));
  cache.Load(1, {100});
  cache.Load(2, {0});
  const std::vector<BagEntry> entries{{1, 1}, {2, 1}};
  std::atomic<bool> done{false};
  std::atomic<long> reads{0}, torn{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const model::Snapshot s = cache.Read(entries);
        if (s.counts[0] + s.counts[1] != s.stats->classes[0].tokens) ++torn;
        ++reads;
      }
    });
  }
  // Publish until the readers have overlapped many publishes: on a loaded machine the readers
  // may not be scheduled before a fixed number of publishes is over.
  for (std::uint64_t i = 1; i <= 20000 || reads.load() < 20000; ++i) {
    const std::uint64_t total = 100 + i;
    const std::uint64_t first = i % 101;
    const std::pair<TokenHash, TokenCounts> tokens[] = {{1, {first}}, {2, {total - first}}};
    cache.Publish(tokens, std::make_shared<const model::ModelStats>(StatsWithTotal(total)));
  }
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_GE(reads.load(), 20000);
  EXPECT_EQ(torn.load(), 0);
}

// Readers keep finding tokens that never change while a writer inserts enough tokens to grow
// every shard's table many times over, and then erases them all again.
TEST(CountCacheTest, ReadersFindEveryTokenWhileTablesGrowAndEmpty) {
  CountCache cache(StatsWithTotal(0));
  std::vector<BagEntry> stable;
  for (TokenHash hash = 1; hash <= 256; ++hash) {
    stable.push_back({Spread(hash * 1000003), 1});
    cache.Load(Spread(hash * 1000003), {hash, 2 * hash});
  }
  std::sort(stable.begin(), stable.end(),
            [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; });
  std::atomic<bool> done{false};
  std::atomic<long> reads{0}, wrong{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const model::Snapshot s = cache.Read(stable);
        for (std::size_t i = 0; i < stable.size(); ++i) {
          if (s.counts[i] != Unspread(stable[i].hash) / 1000003) ++wrong;
        }
        ++reads;
      }
    });
  }
  constexpr TokenHash kAdded = 200000;
  for (int round = 0; round < 2 || reads.load() < 1000; ++round) {
    for (TokenHash first = 0; first < kAdded; first += 5000) {
      std::vector<std::pair<TokenHash, TokenCounts>> batch;
      for (TokenHash hash = first; hash < first + 5000; ++hash) {
        batch.emplace_back(Spread(hash * 2 + 1'000'000'000'000),
                           round % 2 == 0 ? TokenCounts{hash + 1} : TokenCounts{});
      }
      cache.Publish(batch, std::make_shared<const model::ModelStats>(StatsWithTotal(0)));
    }
    ASSERT_EQ(cache.TokenCount(), stable.size() + (round % 2 == 0 ? kAdded : 0));
  }
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_GE(reads.load(), 1000);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache.Get(Spread(2 * 1000003)), (TokenCounts{2, 4}));
}

// ForEachToken (Store::VisitTokens) while a writer adds, changes and erases tokens and grows the
// tables: every stable token is visited once a pass with its counts, and a token the writer
// touches is seen with counts it published (never torn, never empty).
TEST(CountCacheTest, ForEachTokenSeesEveryStableTokenWhileTablesChange) {
  CountCache cache(StatsWithTotal(0));
  for (TokenHash hash = 1; hash <= 256; ++hash) {
    cache.Load(Spread(hash * 1000003), {hash, 2 * hash});
  }
  std::atomic<bool> done{false};
  std::atomic<long> passes{0}, wrong{0};
  std::thread visitor([&] {
    while (!done.load()) {
      long stable = 0;
      cache.ForEachToken([&](TokenHash spread, std::span<const std::uint64_t> counts) {
        const TokenHash hash = Unspread(spread);
        if (counts.empty()) ++wrong;
        if (hash % 1000003 == 0 && hash / 1000003 <= 256) {
          ++stable;
          if (counts.size() != 2 || counts[1] != 2 * counts[0]) ++wrong;
        } else if (counts.size() != 1 || counts[0] != (hash - 1'000'000'000'000) / 2 + 1) {
          ++wrong;
        }
      });
      if (stable != 256) ++wrong;
      ++passes;
    }
  });
  constexpr TokenHash kAdded = 100000;
  for (int round = 0; round < 2 || passes.load() < 20; ++round) {
    for (TokenHash first = 0; first < kAdded; first += 5000) {
      std::vector<std::pair<TokenHash, TokenCounts>> batch;
      for (TokenHash hash = first; hash < first + 5000; ++hash) {
        batch.emplace_back(Spread(hash * 2 + 1'000'000'000'000),
                           round % 2 == 0 ? TokenCounts{hash + 1} : TokenCounts{});
      }
      // By hash, as a resolved delta is: Publish locks each shard once.
      std::sort(batch.begin(), batch.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      cache.Publish(batch, std::make_shared<const model::ModelStats>(StatsWithTotal(0)));
    }
  }
  done = true;
  visitor.join();
  EXPECT_GE(passes.load(), 20);
  EXPECT_EQ(wrong.load(), 0);
}

// Read takes a shard's lock once for each run of entries in it: entries in any order (sorted by
// hash as a bag's are, reversed, shards interleaved, one shard's entries far apart, repeated)
// read what Get reads for each, unknown tokens included.
TEST(CountCacheTest, ReadInAnyOrderReadsEachTokensCounts) {
  model::ModelStats stats = StatsWithTotal(0);
  stats.classes.push_back({"ham", 0, 0});
  CountCache cache(stats);
  std::mt19937_64 random(59);
  std::vector<BagEntry> entries;
  for (int i = 0; i < 2000; ++i) {
    const TokenHash hash = random();
    if (i % 3 != 0) cache.Load(hash, {hash % 1000, hash % 7});
    entries.push_back({hash, 1});
  }
  auto check = [&](const std::vector<BagEntry>& order) {
    const model::Snapshot s = cache.Read(order);
    ASSERT_EQ(s.counts.size(), 2 * order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      const TokenCounts counts = cache.Get(order[i].hash);
      EXPECT_EQ(s.counts[2 * i], counts.empty() ? 0 : counts[0]) << i;
      EXPECT_EQ(s.counts[2 * i + 1], counts.size() < 2 ? 0 : counts[1]) << i;
    }
  };
  auto by_hash = [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; };
  std::sort(entries.begin(), entries.end(), by_hash);
  check(entries);
  std::reverse(entries.begin(), entries.end());
  check(entries);
  std::shuffle(entries.begin(), entries.end(), random);
  check(entries);
  // Two shards' entries alternating, then one shard's entries before and after the others'.
  std::vector<BagEntry> interleaved;
  for (std::size_t i = 0; i < 64; ++i) {
    interleaved.push_back({(TokenHash{1} << 58) | i, 1});
    interleaved.push_back({(TokenHash{2} << 58) | i, 1});
    cache.Load(interleaved[interleaved.size() - 2].hash, {i + 1});
  }
  interleaved.push_back(interleaved.front());
  check(interleaved);
}

TEST(CountCacheTest, EmptyCountsEraseAToken) {
  CountCache cache(StatsWithTotal(1));
  cache.Load(5, {1});
  EXPECT_EQ(cache.TokenCount(), 1u);
  const std::pair<TokenHash, TokenCounts> erase[] = {{5, {}}};
  cache.Publish(erase, std::make_shared<const model::ModelStats>(StatsWithTotal(0)));
  EXPECT_EQ(cache.TokenCount(), 0u);
  EXPECT_TRUE(cache.Get(5).empty());
}

TEST(CountCacheTest, ShortCountsReadAsZeroForLaterClasses) {
  model::ModelStats stats = StatsWithTotal(1);
  stats.classes.push_back({"ham", 0, 0});
  CountCache cache(stats);
  cache.Load(5, {7});
  const std::vector<BagEntry> entries{{5, 1}, {6, 1}};
  const model::Snapshot s = cache.Read(entries);
  EXPECT_EQ(s.counts, (std::vector<std::uint64_t>{7, 0, 0, 0}));
}

}  // namespace
}  // namespace nbspamd::storage
