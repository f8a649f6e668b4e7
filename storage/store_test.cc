// The Store contract, run against every backend.
#include "storage/store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>

#include "model/learning.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::storage {
namespace {

struct Backend {
  std::string name;
  std::function<std::unique_ptr<Store>(const TempDir&)> open;
};

void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.name; }

std::unique_ptr<Store> OpenRocksdb(const TempDir& dir) {
  auto store = RocksdbStore::Open(dir.Join("model"));
  if (!store) ADD_FAILURE() << store.error().message;
  return std::move(*store);
}

// Bags of the seed documents, words hashed by a fixed table.
TokenBag Bag(const std::string& text) {
  std::map<TokenHash, std::uint32_t> counts;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = std::min(text.find(' ', start), text.size());
    ++counts[std::hash<std::string>{}(text.substr(start, end - start))];
    start = end + 1;
  }
  TokenBag bag;
  for (const auto& [hash, count] : counts) bag.entries.push_back({hash, count});
  return bag;
}

struct Document {
  std::string id, label, text;
};

const std::vector<Document> kSeed = {
    {"d1", "spam", "send us your password"}, {"d2", "spam", "review us"},
    {"d3", "spam", "send us your account"},  {"d4", "spam", "send your password"},
    {"d5", "ham", "password review"},        {"d6", "ham", "send us your review"}};

const char kAllWords[] = "send us your password review account";

model::LearnStatus Learn(Store& store, const std::string& id, const std::string& label,
                         const std::string& text) {
  auto learned = store.FindLearned(id);
  EXPECT_TRUE(learned.has_value());
  const model::LearnPlan plan = model::PlanLearn(id, label, Bag(text), *learned, *store.Stats());
  if (plan.status != model::LearnStatus::kUnchanged) {
    auto applied = store.Apply(plan.delta);
    EXPECT_TRUE(applied.has_value()) << applied.error().message;
  }
  return plan.status;
}

void Forget(Store& store, const std::string& id) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  ASSERT_TRUE(store.Apply(model::PlanForget(id, **learned, *store.Stats())).has_value());
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { store_ = GetParam().open(dir_); }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, StartsEmptyWithSpamAndHam) {
  const auto stats = store_->Stats();
  ASSERT_EQ(stats->classes.size(), 2u);
  EXPECT_EQ(stats->classes[0], (model::ClassStats{"spam", 0, 0}));
  EXPECT_EQ(stats->classes[1], (model::ClassStats{"ham", 0, 0}));
  EXPECT_EQ(stats->vocabulary_size, 0u);
  EXPECT_FALSE(store_->FindLearned("nothing")->has_value());
}

TEST_P(StoreTest, SeedDocumentsGiveTheTextbookCounts) {
  for (const Document& d : kSeed)
    EXPECT_EQ(Learn(*store_, d.id, d.label, d.text), model::LearnStatus::kLearned);
  const auto stats = store_->Stats();
  EXPECT_EQ(stats->classes[0], (model::ClassStats{"spam", 4, 13}));
  EXPECT_EQ(stats->classes[1], (model::ClassStats{"ham", 2, 6}));
  EXPECT_EQ(stats->vocabulary_size, 6u);
  const TokenBag words = Bag(kAllWords);
  const model::Snapshot snapshot = store_->Read(words.entries);
  std::map<TokenHash, std::pair<std::uint64_t, std::uint64_t>> counts;
  for (std::size_t i = 0; i < words.entries.size(); ++i) {
    counts[words.entries[i].hash] = {snapshot.CountsOf(i)[0], snapshot.CountsOf(i)[1]};
  }
  const auto count_of = [&](const std::string& word) { return counts[Bag(word).entries[0].hash]; };
  EXPECT_EQ(count_of("send"), std::make_pair(std::uint64_t{3}, std::uint64_t{1}));
  EXPECT_EQ(count_of("review"), std::make_pair(std::uint64_t{1}, std::uint64_t{2}));
  EXPECT_EQ(count_of("account"), std::make_pair(std::uint64_t{1}, std::uint64_t{0}));
}

TEST_P(StoreTest, IncrementalInAnyOrderEqualsBatch) {
  for (const Document& d : kSeed) Learn(*store_, d.id, d.label, d.text);
  const TokenBag words = Bag(kAllWords);
  const model::Snapshot reference = store_->Read(words.entries);

  std::vector<Document> shuffled = kSeed;
  std::mt19937 random(42);
  for (int round = 0; round < 3; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    TempDir other_dir;
    auto other = GetParam().open(other_dir);
    for (const Document& d : shuffled) Learn(*other, d.id, d.label, d.text);
    const model::Snapshot snapshot = other->Read(words.entries);
    EXPECT_EQ(*snapshot.stats, *reference.stats);
    EXPECT_EQ(snapshot.counts, reference.counts);
  }
}

TEST_P(StoreTest, ForgetAfterLearnRestoresTheCountsBitForBit) {
  for (const Document& d : kSeed) {
    if (d.id != "d3") Learn(*store_, d.id, d.label, d.text);
  }
  const TokenBag words = Bag(kAllWords);
  const model::Snapshot before = store_->Read(words.entries);
  Learn(*store_, "d3", "spam", "send us your account");
  EXPECT_NE(*store_->Stats(), *before.stats);
  Forget(*store_, "d3");
  const model::Snapshot after = store_->Read(words.entries);
  EXPECT_EQ(*after.stats, *before.stats);
  EXPECT_EQ(after.counts, before.counts);
  EXPECT_FALSE(store_->FindLearned("d3")->has_value());
}

TEST_P(StoreTest, RelearnMovesCountsAndSameLabelIsUnchanged) {
  EXPECT_EQ(Learn(*store_, "m", "spam", "cheap pills now"), model::LearnStatus::kLearned);
  EXPECT_EQ(Learn(*store_, "m", "spam", "cheap pills now"), model::LearnStatus::kUnchanged);
  EXPECT_EQ(Learn(*store_, "m", "ham", "cheap pills now"), model::LearnStatus::kRelearned);
  const auto stats = store_->Stats();
  EXPECT_EQ(stats->classes[0], (model::ClassStats{"spam", 0, 0}));
  EXPECT_EQ(stats->classes[1], (model::ClassStats{"ham", 1, 3}));
  EXPECT_EQ(stats->vocabulary_size, 3u);
  EXPECT_EQ((*store_->FindLearned("m"))->label, "ham");
}

TEST_P(StoreTest, NewLabelCreatesAClass) {
  Learn(*store_, "m", "phishing", "verify your account");
  const auto stats = store_->Stats();
  ASSERT_EQ(stats->classes.size(), 3u);
  EXPECT_EQ(stats->classes[2], (model::ClassStats{"phishing", 1, 3}));
}

TEST_P(StoreTest, ImpossibleDeltaIsRejectedWhole) {
  Learn(*store_, "m", "spam", "one two");
  const auto before = store_->Stats();
  model::Delta delta;
  delta.token_changes = {{Bag("three").entries[0].hash, 0, 1}, {Bag("one").entries[0].hash, 0, -5}};
  delta.document_changes = {{0, 1}};
  const auto applied = store_->Apply(delta);
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(*store_->Stats(), *before);
  model::Delta unknown_class;
  unknown_class.document_changes = {{7, 1}};
  EXPECT_EQ(store_->Apply(unknown_class).error().code, ErrorCode::kDataLoss);
}

TEST_P(StoreTest, StreamPositionTravelsWithTheDelta) {
  EXPECT_EQ(store_->StreamPosition(), "");
  auto plan = model::PlanLearn("m", "spam", Bag("a b"), std::nullopt, *store_->Stats());
  plan.delta.stream_position = "1700000000000-3";
  ASSERT_TRUE(store_->Apply(plan.delta).has_value());
  EXPECT_EQ(store_->StreamPosition(), "1700000000000-3");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend{"Memory",
                                                   [](const TempDir&) {
                                                     return std::unique_ptr<Store>(
                                                         new MemoryStore());
                                                   }},
                                           Backend{"Rocksdb", OpenRocksdb}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace nbspamd::storage
