#include "storage/count_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace nbspamd::storage {
namespace {

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
