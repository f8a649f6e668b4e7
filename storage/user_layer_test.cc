// UserLayer and UserLayerCache: reads aligned to the global classes, the LRU's memory bound, and
// the generation rule that keeps a reader from caching a layer older than a published one.
#include <gtest/gtest.h>

#include "storage/user_layer_cache.h"

namespace nbspamd::storage {
namespace {

model::ModelStats Stats(std::uint64_t spam_documents, std::uint64_t ham_documents,
                        std::uint64_t vocabulary) {
  model::ModelStats stats;
  stats.classes = {{"spam", spam_documents, 0}, {"ham", ham_documents, 0}};
  stats.vocabulary_size = vocabulary;
  return stats;
}

// A layer with `tokens` tokens 1..tokens, each counted (1, 2).
std::shared_ptr<UserLayer> Layer(std::uint64_t tokens) {
  auto layer = std::make_shared<UserLayer>(tokens);
  for (std::uint64_t t = 1; t <= tokens; ++t) layer->Load(t, {1, 2});
  model::ModelStats stats = Stats(1, 1, tokens);
  stats.classes[0].tokens = tokens;
  stats.classes[1].tokens = 2 * tokens;
  layer->LoadStats(std::move(stats));
  return layer;
}

TEST(UserLayerTest, AnEmptyLayerReadsAsNoLayer) {
  const UserLayer layer;
  EXPECT_FALSE(layer.Read(Stats(1, 1, 1), std::vector<BagEntry>{{1, 1}}).has_value());
  EXPECT_TRUE(IsEmptyLayer(*layer.Stats()));
}

TEST(UserLayerTest, ReadGivesTheGlobalClassesAndZerosForUnknownTokens) {
  const auto layer = Layer(3);
  model::ModelStats global = Stats(5, 5, 10);
  global.classes.push_back({"phishing", 1, 1});
  const std::vector<BagEntry> entries = {{2, 1}, {99, 1}};
  const auto snapshot = layer->Read(global, entries);
  ASSERT_TRUE(snapshot.has_value());
  ASSERT_EQ(snapshot->stats->classes.size(), 3u);
  EXPECT_EQ(snapshot->stats->classes[2], (model::ClassStats{"phishing", 0, 0}));
  EXPECT_EQ(snapshot->stats->classes[1], (model::ClassStats{"ham", 1, 6}));
  EXPECT_EQ(snapshot->counts, (std::vector<std::uint64_t>{1, 2, 0, 0, 0, 0}));
}

TEST(UserLayerTest, SetChangesTokensAndStatsTogether) {
  const auto layer = Layer(2);
  const std::vector<std::pair<TokenHash, TokenCounts>> tokens = {{1, {}}, {7, {0, 4}}};
  layer->Set(tokens, Stats(0, 1, 2));
  EXPECT_EQ(layer->Get(1), TokenCounts{});
  EXPECT_EQ(layer->Get(7), (TokenCounts{0, 4}));
  EXPECT_EQ(layer->Stats()->vocabulary_size, 2u);
}

TEST(UserLayerCacheTest, StaysWithinItsBudgetLeastRecentlyUsedFirstOut) {
  const std::size_t one = Layer(100)->MemoryBytes();
  UserLayerCache cache(3 * one + 3 * 200);  // Room for three such layers with their entries.
  for (const char* user : {"a", "b", "c"}) cache.Published(user, Layer(100));
  EXPECT_EQ(cache.Figures().layers, 3u);
  ASSERT_NE(cache.Find("a"), nullptr);  // "b" is now the least recently used.
  cache.Published("d", Layer(100));
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_NE(cache.Find("a"), nullptr);
  EXPECT_NE(cache.Find("c"), nullptr);
  EXPECT_NE(cache.Find("d"), nullptr);
  const UserLayerCacheFigures figures = cache.Figures();
  EXPECT_LE(figures.bytes, 3 * one + 3 * 200);
  EXPECT_EQ(figures.evictions, 1u);
  EXPECT_EQ(figures.misses, 1u);
  EXPECT_EQ(figures.hits, 4u);
}

TEST(UserLayerCacheTest, ALayerLargerThanTheBudgetIsNotKept) {
  UserLayerCache cache(1000);
  cache.Published("big", Layer(10'000));
  EXPECT_EQ(cache.Find("big"), nullptr);
  EXPECT_EQ(cache.Figures().bytes, 0u);
}

TEST(UserLayerCacheTest, ALoadOverlappingAPublishedChangeIsNotCached) {
  UserLayerCache cache(std::size_t{1} << 20);
  const std::uint64_t before = cache.Generation();
  cache.Published("other", Layer(1));  // A write lands while "a" is read from disk.
  const auto stale = Layer(1);
  EXPECT_EQ(cache.InsertLoaded("a", stale, before), stale);
  EXPECT_EQ(cache.Find("a"), nullptr);
  const auto fresh = Layer(1);
  EXPECT_EQ(cache.InsertLoaded("a", fresh, cache.Generation()), fresh);
  EXPECT_EQ(cache.Find("a"), fresh);
  // A second loader finds the first one's layer.
  EXPECT_EQ(cache.InsertLoaded("a", Layer(1), cache.Generation()), fresh);
  cache.Erase("a");
  EXPECT_EQ(cache.Find("a"), nullptr);
}

}  // namespace
}  // namespace nbspamd::storage
