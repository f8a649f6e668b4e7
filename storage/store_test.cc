// The Store contract, run against every backend.
#include "storage/store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "model/learning.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::storage {
namespace {

// `prefix` followed by `i` (a helper: GCC 12 warns wrongly about "literal" + std::to_string).
std::string Numbered(const char* prefix, std::uint64_t i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

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

// Learns or forgets on `store` one event at a time and returns the deltas it applied, in order.
struct Event {
  std::string id, label, text;  // label "" forgets the id.
};

std::vector<model::Delta> ApplyOneByOne(Store& store, const std::vector<Event>& events) {
  std::vector<model::Delta> deltas;
  for (const Event& e : events) {
    auto learned = store.FindLearned(e.id);
    EXPECT_TRUE(learned.has_value());
    if (e.label.empty()) {
      EXPECT_TRUE(learned->has_value()) << e.id;
      deltas.push_back(model::PlanForget(e.id, **learned, *store.Stats()));
    } else {
      auto plan = model::PlanLearn(e.id, e.label, Bag(e.text), *learned, *store.Stats());
      if (plan.status == model::LearnStatus::kUnchanged) continue;
      deltas.push_back(std::move(plan.delta));
    }
    auto applied = store.Apply(deltas.back());
    EXPECT_TRUE(applied.has_value()) << applied.error().message;
  }
  return deltas;
}

// The whole observable state of a store over the ids and words the tests use.
void ExpectSameModel(const Store& actual, const Store& expected,
                     const std::vector<std::string>& ids) {
  const TokenBag words = Bag(std::string(kAllWords) + " cheap pills now verify one two three");
  const model::Snapshot a = actual.Read(words.entries);
  const model::Snapshot e = expected.Read(words.entries);
  EXPECT_EQ(*a.stats, *e.stats);
  EXPECT_EQ(a.counts, e.counts);
  for (const std::string& id : ids) {
    EXPECT_EQ(*actual.FindLearned(id), *expected.FindLearned(id)) << id;
  }
  EXPECT_EQ(actual.StreamPosition(), expected.StreamPosition());
}

TEST_P(StoreTest, BatchEqualsSequentialApplies) {
  const std::vector<Event> events = {
      {"d1", "spam", "send us your password"},   {"d2", "spam", "review us"},
      {"d5", "ham", "password review"},          {"d2", "ham", "review us"},
      {"d3", "spam", "send us your account"},    {"d1", "", ""},
      {"p", "phishing", "verify your account"},  {"d6", "ham", "send us your review"},
      {"d3", "phishing", "send us your account"}};
  TempDir sequential_dir;
  auto sequential = GetParam().open(sequential_dir);
  std::vector<model::Delta> deltas = ApplyOneByOne(*sequential, events);
  deltas.back().stream_position = "7-1";
  model::Delta position_only;
  position_only.stream_position = "7-1";
  ASSERT_TRUE(sequential->Apply(position_only).has_value());

  const auto results = store_->ApplyBatch(deltas);
  ASSERT_TRUE(results.has_value()) << results.error().message;
  ASSERT_EQ(results->size(), deltas.size());
  for (const auto& result : *results) EXPECT_TRUE(result.has_value()) << result.error().message;
  ExpectSameModel(*store_, *sequential, {"d1", "d2", "d3", "d5", "d6", "p"});
  EXPECT_EQ(store_->Stats()->classes.size(), 3u);
  EXPECT_EQ(store_->StreamPosition(), "7-1");
}

TEST_P(StoreTest, SameIdLearnedRelearnedAndForgottenInOneBatch) {
  Learn(*store_, "other", "ham", "lunch at noon");
  TempDir sequential_dir;
  auto sequential = GetParam().open(sequential_dir);
  Learn(*sequential, "other", "ham", "lunch at noon");
  const std::vector<model::Delta> deltas =
      ApplyOneByOne(*sequential, {{"m", "spam", "cheap pills now"},
                                  {"m", "ham", "cheap pills now"},
                                  {"m", "", ""},
                                  {"n", "spam", "cheap now"},
                                  {"n", "ham", "cheap now"}});
  ASSERT_EQ(deltas.size(), 5u);

  const auto results = store_->ApplyBatch(deltas);
  ASSERT_TRUE(results.has_value()) << results.error().message;
  for (const auto& result : *results) EXPECT_TRUE(result.has_value()) << result.error().message;
  ExpectSameModel(*store_, *sequential, {"m", "n", "other"});
  EXPECT_FALSE(store_->FindLearned("m")->has_value());
  EXPECT_EQ((*store_->FindLearned("n"))->label, "ham");
  const auto stats = store_->Stats();
  EXPECT_EQ(stats->classes[0], (model::ClassStats{"spam", 0, 0}));
  EXPECT_EQ(stats->classes[1], (model::ClassStats{"ham", 2, 5}));
  EXPECT_EQ(stats->vocabulary_size, 5u);  // lunch at noon cheap now; "pills" is gone again.
}

TEST_P(StoreTest, OneBadDeltaInABatchIsLeftOutAndTheOthersApplied) {
  Learn(*store_, "m", "spam", "one two");
  auto good_a = model::PlanLearn("a", "ham", Bag("one three"), std::nullopt, *store_->Stats());
  auto good_b = model::PlanLearn("b", "spam", Bag("two"), std::nullopt, *store_->Stats());
  // Forgets "m" as if it had learned "one" five times: the counts cannot go that low.
  model::Delta bad = model::PlanForget(
      "m", {"spam", {{Bag("one").entries[0].hash, 5}}, {}, std::nullopt}, *store_->Stats());
  // Planned on what `bad` would have left: a fresh learn of "m".
  auto after_bad = model::PlanLearn("m", "ham", Bag("four"), std::nullopt, *store_->Stats());
  model::Delta unknown_class;
  unknown_class.document_changes = {{7, 1}};

  const std::vector<model::Delta> deltas = {good_a.delta, bad, good_b.delta, after_bad.delta,
                                            unknown_class};
  const auto results = store_->ApplyBatch(deltas);
  ASSERT_TRUE(results.has_value()) << results.error().message;
  ASSERT_EQ(results->size(), 5u);
  EXPECT_TRUE((*results)[0].has_value());
  ASSERT_FALSE((*results)[1].has_value());
  EXPECT_EQ((*results)[1].error().code, ErrorCode::kDataLoss);
  EXPECT_TRUE((*results)[2].has_value());
  ASSERT_FALSE((*results)[3].has_value());
  EXPECT_EQ((*results)[3].error().code, ErrorCode::kDataLoss);
  ASSERT_FALSE((*results)[4].has_value());
  EXPECT_EQ((*results)[4].error().code, ErrorCode::kDataLoss);

  TempDir sequential_dir;
  auto sequential = GetParam().open(sequential_dir);
  ApplyOneByOne(*sequential,
                {{"m", "spam", "one two"}, {"a", "ham", "one three"}, {"b", "spam", "two"}});
  ExpectSameModel(*store_, *sequential, {"a", "b", "m"});
  EXPECT_EQ((*store_->FindLearned("m"))->label, "spam");
}

TEST_P(StoreTest, BatchOfOnlyBadDeltasChangesNothing) {
  Learn(*store_, "m", "spam", "one two");
  const auto before = store_->Stats();
  model::Delta unknown_class;
  unknown_class.document_changes = {{7, 1}};
  unknown_class.stream_position = "9-9";
  const std::vector<model::Delta> deltas = {unknown_class};
  const auto results = store_->ApplyBatch(deltas);
  ASSERT_TRUE(results.has_value());
  EXPECT_EQ((*results)[0].error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(*store_->Stats(), *before);
  EXPECT_EQ(store_->StreamPosition(), "");
  EXPECT_TRUE(store_->ApplyBatch({}).has_value());
}

void LearnFrom(Store& store, const std::string& id, const std::string& label,
               const std::string& text, model::LearnOrigin origin) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, Bag(text), *learned, *store.Stats(), std::move(origin));
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

std::vector<std::string> Ids(const std::expected<std::vector<LearnedMessage>, Error>& listed) {
  EXPECT_TRUE(listed.has_value());
  std::vector<std::string> ids;
  if (listed) {
    for (const LearnedMessage& message : *listed) ids.push_back(message.id);
  }
  return ids;
}

TEST_P(StoreTest, ListLearnedBySourceAndTimeWindowFollowsRelearnsAndForgets) {
  using Ids_ = std::vector<std::string>;
  constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max();
  LearnFrom(*store_, "a", "spam", "send us", {"mx1", 100});
  LearnFrom(*store_, "b", "spam", "your password", {"mx1", 200});
  LearnFrom(*store_, "c", "ham", "review", {"feedback", 150});
  LearnFrom(*store_, "ab", "ham", "review us", {"mx", 100});  // A source that prefixes another.
  EXPECT_EQ(Ids(store_->ListLearned("mx1", 0, kAll, 100)), (Ids_{"a", "b"}));
  EXPECT_EQ(Ids(store_->ListLearned("mx", 0, kAll, 100)), (Ids_{"ab"}));
  EXPECT_EQ(Ids(store_->ListLearned("mx1", 150, 201, 100)), (Ids_{"b"}));
  EXPECT_EQ(Ids(store_->ListLearned("mx1", 0, 200, 100)), (Ids_{"a"}));
  EXPECT_EQ(Ids(store_->ListLearned("mx1", 0, kAll, 1)), (Ids_{"a"}));
  EXPECT_EQ(Ids(store_->ListLearned("nobody", 0, kAll, 100)), Ids_{});

  // Relearned through another source, "b" is that source's now; forgotten, nobody's.
  LearnFrom(*store_, "b", "ham", "your password", {"feedback", 300});
  EXPECT_EQ(Ids(store_->ListLearned("mx1", 0, kAll, 100)), (Ids_{"a"}));
  const auto feedback = store_->ListLearned("feedback", 0, kAll, 100);
  ASSERT_TRUE(feedback.has_value());
  ASSERT_EQ(feedback->size(), 2u);
  EXPECT_EQ((*feedback)[1], (LearnedMessage{"b", "ham", {"feedback", 300}}));
  Forget(*store_, "c");
  EXPECT_EQ(Ids(store_->ListLearned("feedback", 0, kAll, 100)), (Ids_{"b"}));
}

// Learns `text` under `id` with the held-out score `score` (what the training writer computes).
void LearnScored(Store& store, const std::string& id, const std::string& label,
                 const std::string& text, double score) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan = model::PlanLearn(id, label, Bag(text), *learned, *store.Stats(), {},
                                                 model::HeldOutScore{model::kScoreScale, score});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

TEST_P(StoreTest, TheCalibrationCountsHeldOutScoresThroughLearnRelearnAndForget) {
  EXPECT_FALSE(store_->Calibration()->ready());
  EXPECT_EQ(store_->Calibration()->histogram(), model::FeedbackHistogram{});
  LearnScored(*store_, "s", "spam", "cheap pills", 0.6);    // Bin 65.
  LearnScored(*store_, "h", "ham", "lunch at noon", -0.6);  // Bin 35.
  LearnScored(*store_, "n", "newsletter", "weekly", 0.1);   // A third class: not counted.
  Learn(*store_, "u", "ham", "no score");                   // No held-out score: not counted.
  model::FeedbackHistogram expected;
  expected.spam[65] = 1;
  expected.ham[35] = 1;
  EXPECT_EQ(store_->Calibration()->histogram(), expected);
  EXPECT_EQ((*store_->FindLearned("s"))->held_out, (model::HeldOutScore{model::kScoreScale, 0.6}));

  // A relearn moves the record's score to its new class; a forget removes it.
  Learn(*store_, "s", "ham", "cheap pills");
  expected.spam[65] = 0;
  expected.ham[65] = 1;
  EXPECT_EQ(store_->Calibration()->histogram(), expected);
  Forget(*store_, "h");
  expected.ham[35] = 0;
  EXPECT_EQ(store_->Calibration()->histogram(), expected);
  Forget(*store_, "s");
  Forget(*store_, "n");
  Forget(*store_, "u");
  EXPECT_EQ(store_->Calibration()->histogram(), model::FeedbackHistogram{});
}

TEST_P(StoreTest, ACalibrationAppearsWithEnoughFeedback) {
  for (std::uint64_t i = 0; i < model::kMinFeedbackPerClass; ++i) {
    LearnScored(*store_, Numbered("s", i), "spam", Numbered("cheap pills ", i), 0.5);
    LearnScored(*store_, Numbered("h", i), "ham", Numbered("lunch ", i), -0.5);
  }
  const auto calibration = store_->Calibration();
  ASSERT_TRUE(calibration->ready());
  EXPECT_LT(*calibration->SpamConfidence(-0.5), 0.1);
  EXPECT_GT(*calibration->SpamConfidence(0.5), 0.9);
  Forget(*store_, "s0");
  EXPECT_FALSE(store_->Calibration()->ready()) << "19 spam scores are not enough";
  EXPECT_TRUE(calibration->ready()) << "a published calibration never changes";
}

TEST_P(StoreTest, AFeedbackCountBelowZeroIsRefusedWithItsDelta) {
  model::Delta bad;
  bad.feedback_changes = {{10, true, -1}};
  const auto applied = store_->Apply(bad);
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().code, ErrorCode::kDataLoss);
  model::Delta unknown_bin;
  unknown_bin.feedback_changes = {{model::kCalibrationBins, false, 1}};
  EXPECT_EQ(store_->Apply(unknown_bin).error().code, ErrorCode::kDataLoss);
  // Within one delta, the changes add up before the check.
  model::Delta net_zero;
  net_zero.feedback_changes = {{10, true, 1}, {10, true, -1}};
  EXPECT_TRUE(store_->Apply(net_zero).has_value());
  EXPECT_EQ(store_->Calibration()->histogram(), model::FeedbackHistogram{});
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
