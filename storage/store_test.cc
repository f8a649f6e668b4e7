// The Store contract, run against every backend.
#include "storage/store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"
#include "tests/support/token_bags.h"

namespace nbspamd::storage {
namespace {

using test_support::BagOfWords;

// `prefix` followed by `i` (a helper: GCC 12 warns wrongly about "literal" + std::to_string).
using test_support::Numbered;

struct Backend {
  std::string name;
  std::function<std::unique_ptr<Store>(const TempDir&)> open;
  // Opens with a per-user limit on distinct tokens.
  std::function<std::unique_ptr<Store>(const TempDir&, std::uint64_t user_token_limit)>
      open_limited;
};

void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.name; }

std::unique_ptr<Store> OpenRocksdb(const TempDir& dir) {
  auto store = RocksdbStore::Open(dir.Join("model"));
  if (!store) ADD_FAILURE() << store.error().message;
  return std::move(*store);
}

std::unique_ptr<Store> OpenRocksdbLimited(const TempDir& dir, std::uint64_t user_token_limit) {
  RocksdbStoreOptions options;
  options.user_token_limit = user_token_limit;
  auto store = RocksdbStore::Open(dir.Join("model"), options);
  if (!store) ADD_FAILURE() << store.error().message;
  return std::move(*store);
}

struct Document {
  std::string id, label, text;
};

const std::vector<Document> kSeed = {
    {"d1", "spam", "send us your password"}, {"d2", "spam", "review us"},
    {"d3", "spam", "send us your account"},  {"d4", "spam", "send your password"},
    {"d5", "ham", "password review"},        {"d6", "ham", "send us your review"}};

const char kSeedWords[] = "send us your password review account";

model::LearnStatus Learn(Store& store, const std::string& id, const std::string& label,
                         const std::string& text) {
  auto learned = store.FindLearned(id);
  EXPECT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats());
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
  const TokenBag words = BagOfWords(kSeedWords);
  const model::Snapshot snapshot = store_->Read(words.entries);
  std::map<TokenHash, std::pair<std::uint64_t, std::uint64_t>> counts;
  for (std::size_t i = 0; i < words.entries.size(); ++i) {
    counts[words.entries[i].hash] = {snapshot.CountsOf(i)[0], snapshot.CountsOf(i)[1]};
  }
  const auto count_of = [&](const std::string& word) {
    return counts[BagOfWords(word).entries[0].hash];
  };
  EXPECT_EQ(count_of("send"), std::make_pair(std::uint64_t{3}, std::uint64_t{1}));
  EXPECT_EQ(count_of("review"), std::make_pair(std::uint64_t{1}, std::uint64_t{2}));
  EXPECT_EQ(count_of("account"), std::make_pair(std::uint64_t{1}, std::uint64_t{0}));
}

// VisitTokens (the strongest tokens' source) gives every token of the model once, with the counts
// Read gives it: the six words of the seed, "send" 3 in spam and 1 in ham, "account" 1 and 0.
TEST_P(StoreTest, VisitTokensGivesEveryTokenOnceWithItsCounts) {
  for (const Document& d : kSeed) Learn(*store_, d.id, d.label, d.text);
  std::map<TokenHash, std::vector<std::uint64_t>> visited;
  const auto visit = [&](TokenHash hash, std::span<const std::uint64_t> counts) {
    const bool first = visited.emplace(hash, std::vector(counts.begin(), counts.end())).second;
    EXPECT_TRUE(first);
  };
  ASSERT_TRUE(store_->VisitTokens(visit).has_value());
  EXPECT_EQ(visited.size(), store_->Stats()->vocabulary_size);
  const auto counts_of = [&](const std::string& word) {
    return visited[BagOfWords(word).entries[0].hash];
  };
  EXPECT_EQ(counts_of("send"), (std::vector<std::uint64_t>{3, 1}));
  EXPECT_EQ(counts_of("account"), (std::vector<std::uint64_t>{1}));  // No trailing zeros.
  EXPECT_EQ(counts_of("review"), (std::vector<std::uint64_t>{1, 2}));
}

TEST_P(StoreTest, IncrementalInAnyOrderEqualsBatch) {
  for (const Document& d : kSeed) Learn(*store_, d.id, d.label, d.text);
  const TokenBag words = BagOfWords(kSeedWords);
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
  const TokenBag words = BagOfWords(kSeedWords);
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
  delta.token_changes = {{BagOfWords("three").entries[0].hash, 0, 1},
                         {BagOfWords("one").entries[0].hash, 0, -5}};
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
  auto plan = model::PlanLearn("m", "spam", BagOfWords("a b"), std::nullopt, *store_->Stats());
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
      auto plan = model::PlanLearn(e.id, e.label, BagOfWords(e.text), *learned, *store.Stats());
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
  const TokenBag words =
      BagOfWords(std::string(kSeedWords) + " cheap pills now verify one two three");
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
  auto good_a =
      model::PlanLearn("a", "ham", BagOfWords("one three"), std::nullopt, *store_->Stats());
  auto good_b = model::PlanLearn("b", "spam", BagOfWords("two"), std::nullopt, *store_->Stats());
  // Forgets "m" as if it had learned "one" five times: the counts cannot go that low.
  model::Delta bad = model::PlanForget(
      "m", {"spam", {{BagOfWords("one").entries[0].hash, 5}}, {}, std::nullopt}, *store_->Stats());
  // Planned on what `bad` would have left: a fresh learn of "m".
  auto after_bad = model::PlanLearn("m", "ham", BagOfWords("four"), std::nullopt, *store_->Stats());
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
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats(), std::move(origin));
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

void LearnScored(Store& store, const std::string& id, const std::string& label,
                 const std::string& text, double score);

std::vector<std::string> NewestIds(const Store& store, std::size_t limit) {
  auto newest = store.NewestLearned(limit);
  EXPECT_TRUE(newest.has_value()) << newest.error().message;
  std::vector<std::string> ids;
  if (newest) {
    for (const LearnedRecord& record : *newest) ids.push_back(record.id);
  }
  return ids;
}

TEST_P(StoreTest, NewestLearnedMergesEverySourceByTimeThenIdAndLeavesAutolearnOut) {
  using Ids_ = std::vector<std::string>;
  EXPECT_EQ(NewestIds(*store_, 10), Ids_{});
  LearnFrom(*store_, "a", "spam", "send us", {"mx1", 100});
  LearnFrom(*store_, "b", "spam", "your password", {"mx1", 200});
  LearnFrom(*store_, "c", "ham", "review", {"", 150});
  LearnFrom(*store_, "d", "ham", "review us", {"mx", 200});  // A source that prefixes another.
  LearnFrom(*store_, "e", "spam", "cheap", {std::string(model::kAutolearnSource), 300});
  LearnFrom(*store_, "f", "ham", "lunch", {"zz", 50});
  EXPECT_EQ(NewestIds(*store_, 10), (Ids_{"d", "b", "c", "a", "f"}));
  EXPECT_EQ(NewestIds(*store_, 2), (Ids_{"d", "b"}));
  EXPECT_EQ(NewestIds(*store_, 0), Ids_{});

  // A relearn takes its new origin; a forget leaves. Each record comes with its label.
  LearnFrom(*store_, "a", "ham", "send us", {"mx", 400});
  Forget(*store_, "d");
  auto newest = store_->NewestLearned(2);
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(*newest, (std::vector<LearnedRecord>{{"a", "ham", {"mx", 400}, std::nullopt},
                                                 {"b", "spam", {"mx1", 200}, std::nullopt}}));
  EXPECT_EQ(NewestIds(*store_, 10), (Ids_{"a", "b", "c", "f"}));
  LearnScored(*store_, "g", "spam", "pills", 0.7);  // Learned at 0: the oldest.
  newest = store_->NewestLearned(10);
  ASSERT_TRUE(newest.has_value());
  ASSERT_EQ(newest->size(), 5u);
  EXPECT_EQ(newest->back(),
            (LearnedRecord{"g", "spam", {"", 0}, model::HeldOutScore{model::kScoreScale, 0.7}}));
}

// Learns `text` under `id` with the held-out score `score` (what the training writer computes).
void LearnScored(Store& store, const std::string& id, const std::string& label,
                 const std::string& text, double score) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats(), {},
                       model::HeldOutScore{model::kScoreScale, score});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

TEST_P(StoreTest, TheCalibrationCountsHeldOutScoresThroughLearnRelearnAndForget) {
  EXPECT_EQ(*store_->Feedback(), model::FeedbackHistogram{});
  LearnScored(*store_, "s", "spam", "cheap pills", 0.6);    // Bin 65.
  LearnScored(*store_, "h", "ham", "lunch at noon", -0.6);  // Bin 35.
  LearnScored(*store_, "n", "newsletter", "weekly", 0.1);   // A third class: not counted.
  Learn(*store_, "u", "ham", "no score");                   // No held-out score: not counted.
  model::FeedbackHistogram expected;
  expected.spam[65] = 1;
  expected.ham[35] = 1;
  EXPECT_EQ(*store_->Feedback(), expected);
  EXPECT_EQ((*store_->FindLearned("s"))->held_out, (model::HeldOutScore{model::kScoreScale, 0.6}));

  // A relearn moves the record's score to its new class; a forget removes it.
  Learn(*store_, "s", "ham", "cheap pills");
  expected.spam[65] = 0;
  expected.ham[65] = 1;
  EXPECT_EQ(*store_->Feedback(), expected);
  Forget(*store_, "h");
  expected.ham[35] = 0;
  EXPECT_EQ(*store_->Feedback(), expected);
  Forget(*store_, "s");
  Forget(*store_, "n");
  Forget(*store_, "u");
  EXPECT_EQ(*store_->Feedback(), model::FeedbackHistogram{});
}

TEST_P(StoreTest, APublishedFeedbackHistogramNeverChanges) {
  for (std::uint64_t i = 0; i < model::kMinFeedbackPerClass; ++i) {
    LearnScored(*store_, Numbered("s", i), "spam", Numbered("cheap pills ", i), 0.5);
    LearnScored(*store_, Numbered("h", i), "ham", Numbered("lunch ", i), -0.5);
  }
  const auto feedback = store_->Feedback();
  EXPECT_EQ(feedback->spam[model::CalibrationBin(0.5)], model::kMinFeedbackPerClass);
  EXPECT_EQ(feedback->ham[model::CalibrationBin(-0.5)], model::kMinFeedbackPerClass);
  Forget(*store_, "s0");
  EXPECT_EQ(store_->Feedback()->spam[model::CalibrationBin(0.5)], model::kMinFeedbackPerClass - 1);
  EXPECT_EQ(feedback->spam[model::CalibrationBin(0.5)], model::kMinFeedbackPerClass)
      << "a published histogram never changes";
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
  EXPECT_EQ(*store_->Feedback(), model::FeedbackHistogram{});
}

// User layers: each layer learns, relearns and forgets exactly on its own; a train of
// both layers is one delta, applied whole or not at all.

// Learns `text` as `label` in `user`'s layer, and in the global model too when `global`.
model::LearnStatus UserLearn(Store& store, const std::string& user, const std::string& id,
                             const std::string& label, const std::string& text, bool global = false,
                             model::LearnOrigin origin = {}) {
  const auto stats = store.Stats();
  model::LearnPlan plan;
  if (global) {
    auto learned = store.FindLearned(id);
    EXPECT_TRUE(learned.has_value());
    plan = model::PlanLearn(id, label, BagOfWords(text), *learned, *stats, origin);
  }
  auto user_learned = store.FindUserLearned(user, id);
  EXPECT_TRUE(user_learned.has_value()) << user_learned.error().message;
  const model::LearnStatus status = model::AddUserLearn(
      plan.delta, user, id, label, BagOfWords(text), *user_learned, *stats, origin);
  if (status != model::LearnStatus::kUnchanged || plan.status != model::LearnStatus::kUnchanged) {
    auto applied = store.Apply(plan.delta);
    EXPECT_TRUE(applied.has_value()) << applied.error().message;
  }
  return status;
}

void UserForget(Store& store, const std::string& user, const std::string& id) {
  auto learned = store.FindUserLearned(user, id);
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  model::Delta delta;
  model::AddUserForget(delta, user, id, **learned, *store.Stats());
  auto applied = store.Apply(delta);
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
}

// The user's layer over every word the tests use: stats and counts, or nullopt.
std::optional<model::Snapshot> UserLayerOf(const Store& store, const std::string& user) {
  const TokenBag words =
      BagOfWords(std::string(kSeedWords) + " cheap pills now verify one two three");
  auto read = store.ReadUser(user, *store.Stats(), words.entries);
  EXPECT_TRUE(read.has_value()) << read.error().message;
  return read.value_or(std::nullopt);
}

void ExpectSameLayer(const std::optional<model::Snapshot>& actual,
                     const std::optional<model::Snapshot>& expected) {
  ASSERT_EQ(actual.has_value(), expected.has_value());
  if (!actual) return;
  EXPECT_EQ(*actual->stats, *expected->stats);
  EXPECT_EQ(actual->counts, expected->counts);
}

TEST_P(StoreTest, AUserWithoutFeedbackHasNoLayer) {
  EXPECT_FALSE(UserLayerOf(*store_, "alice").has_value());
  EXPECT_FALSE(store_->UserStats("alice")->has_value());
  EXPECT_FALSE(store_->FindUserLearned("alice", "m1")->has_value());
  EXPECT_EQ(store_->UserFigures().users, 0u);
}

TEST_P(StoreTest, AUserLearnChangesOnlyThatUsersLayer) {
  for (const Document& d : kSeed) Learn(*store_, d.id, d.label, d.text);
  const auto global_before = *store_->Stats();
  EXPECT_EQ(UserLearn(*store_, "alice", "m1", "ham", "send us your password"),
            model::LearnStatus::kLearned);
  EXPECT_EQ(*store_->Stats(), global_before);
  EXPECT_FALSE(UserLayerOf(*store_, "bob").has_value());
  const auto stats = store_->UserStats("alice");
  ASSERT_TRUE(stats.has_value() && stats->has_value());
  EXPECT_EQ((*stats)->classes[0], (model::ClassStats{"spam", 0, 0}));
  EXPECT_EQ((*stats)->classes[1], (model::ClassStats{"ham", 1, 4}));
  EXPECT_EQ((*stats)->vocabulary_size, 4u);
  const TokenBag bag = BagOfWords("password account");
  const auto layer = store_->ReadUser("alice", *store_->Stats(), bag.entries);
  ASSERT_TRUE(layer.has_value() && layer->has_value());
  // Sorted by hash: find each word's row.
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    const bool password = bag.entries[i].hash == BagOfWords("password").entries[0].hash;
    EXPECT_EQ((*layer)->CountsOf(i)[0], 0u);
    EXPECT_EQ((*layer)->CountsOf(i)[1], password ? 1u : 0u);
  }
  EXPECT_EQ((*store_->FindUserLearned("alice", "m1"))->label, "ham");
  EXPECT_FALSE(store_->FindLearned("m1")->has_value()) << "the global ledger is not the user's";
  EXPECT_EQ(store_->UserFigures().users, 1u);
}

TEST_P(StoreTest, ListUsersPagesThroughTheLayersInIdOrderWithTheirStats) {
  EXPECT_TRUE(store_->ListUsers("", 10)->empty());
  UserLearn(*store_, "carol", "m1", "spam", "cheap pills now");
  UserLearn(*store_, "alice", "m1", "ham", "send us your password");
  UserLearn(*store_, "alice", "m2", "spam", "cheap pills");
  UserLearn(*store_, "al", "m1", "ham", "one two three");
  UserLearn(*store_, "bob", "m1", "ham", "one");
  UserForget(*store_, "bob", "m1");  // A layer emptied by a forget is no layer.
  const auto all = store_->ListUsers("", 10);
  ASSERT_TRUE(all.has_value()) << all.error().message;
  std::vector<std::string> names;
  for (const UserSummary& user : *all) names.push_back(user.user);
  EXPECT_EQ(names, (std::vector<std::string>{"al", "alice", "carol"}));
  EXPECT_EQ((*all)[1].stats, **store_->UserStats("alice"));
  EXPECT_EQ((*all)[1].stats.classes[0], (model::ClassStats{"spam", 1, 2}));
  EXPECT_EQ((*all)[1].stats.classes[1], (model::ClassStats{"ham", 1, 4}));
  // Pages: after a listed user, at most `limit`.
  const auto first = store_->ListUsers("", 2);
  ASSERT_EQ(first->size(), 2u);
  const auto rest = store_->ListUsers(first->back().user, 2);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ(rest->front().user, "carol");
  EXPECT_TRUE(store_->ListUsers("carol", 2)->empty());
  EXPECT_EQ(store_->ListUsers("b", 5)->front().user, "carol");
}

TEST_P(StoreTest, ListAllUsersReadsPastTheFirstPage) {
  EXPECT_TRUE(store_->ListAllUsers()->empty());
  constexpr int kUsers = 1001;  // a full page of 1,000 and one more
  for (int i = 0; i < kUsers; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "user%04d", i);
    UserLearn(*store_, name, "m1", i % 2 == 0 ? "spam" : "ham", "cheap pills now");
  }
  const auto all = store_->ListAllUsers();
  ASSERT_TRUE(all.has_value()) << all.error().message;
  ASSERT_EQ(all->size(), static_cast<std::size_t>(kUsers));
  EXPECT_EQ(all->front().user, "user0000");
  EXPECT_EQ((*all)[999].user, "user0999");
  EXPECT_EQ(all->back().user, "user1000");
  EXPECT_EQ(all->back().stats, **store_->UserStats("user1000"));
}

TEST_P(StoreTest, UserForgetRestoresTheLayerBitForBitAndRelearnMoves) {
  UserLearn(*store_, "alice", "m0", "spam", "cheap pills now");
  const auto before = UserLayerOf(*store_, "alice");
  const auto global_before = *store_->Stats();
  EXPECT_EQ(UserLearn(*store_, "alice", "m1", "spam", "send us your password"),
            model::LearnStatus::kLearned);
  EXPECT_EQ(UserLearn(*store_, "alice", "m1", "spam", "send us your password"),
            model::LearnStatus::kUnchanged);
  EXPECT_EQ(UserLearn(*store_, "alice", "m1", "ham", "send us your password"),
            model::LearnStatus::kRelearned);
  const auto stats = store_->UserStats("alice");
  EXPECT_EQ((*stats)->classes[0], (model::ClassStats{"spam", 1, 3}));
  EXPECT_EQ((*stats)->classes[1], (model::ClassStats{"ham", 1, 4}));
  UserForget(*store_, "alice", "m1");
  ExpectSameLayer(UserLayerOf(*store_, "alice"), before);
  EXPECT_EQ(*store_->Stats(), global_before);
  EXPECT_FALSE(store_->FindUserLearned("alice", "m1")->has_value());
  // Forgetting the last message leaves no layer at all.
  UserForget(*store_, "alice", "m0");
  EXPECT_FALSE(UserLayerOf(*store_, "alice").has_value());
  EXPECT_FALSE(store_->UserStats("alice")->has_value());
  EXPECT_EQ(store_->UserFigures().users, 0u);
}

TEST_P(StoreTest, AUserLearnThatTrainsGlobalTooChangesBothInOneDelta) {
  EXPECT_EQ(UserLearn(*store_, "alice", "m1", "spam", "cheap pills now", /*global=*/true),
            model::LearnStatus::kLearned);
  EXPECT_EQ(store_->Stats()->classes[0], (model::ClassStats{"spam", 1, 3}));
  EXPECT_EQ((*store_->UserStats("alice"))->classes[0], (model::ClassStats{"spam", 1, 3}));
  EXPECT_EQ((*store_->FindLearned("m1"))->label, "spam");
  EXPECT_EQ((*store_->FindUserLearned("alice", "m1"))->label, "spam");

  // A delta whose user part cannot apply is refused whole: the global part is not applied.
  const auto global_before = *store_->Stats();
  const auto layer_before = UserLayerOf(*store_, "alice");
  auto plan =
      model::PlanLearn("m2", "ham", BagOfWords("lunch at noon"), std::nullopt, global_before);
  model::AddUserForget(plan.delta, "alice", "m2",
                       {"spam", {{BagOfWords("cheap").entries[0].hash, 5}}, {}, std::nullopt},
                       global_before);
  const auto applied = store_->Apply(plan.delta);
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(*store_->Stats(), global_before);
  EXPECT_FALSE(store_->FindLearned("m2")->has_value());
  ExpectSameLayer(UserLayerOf(*store_, "alice"), layer_before);

  // Forgetting from both layers, in one delta.
  const auto stats = store_->Stats();
  model::Delta forget = model::PlanForget("m1", **store_->FindLearned("m1"), *stats);
  model::AddUserForget(forget, "alice", "m1", **store_->FindUserLearned("alice", "m1"), *stats);
  ASSERT_TRUE(store_->Apply(forget).has_value());
  EXPECT_EQ(store_->Stats()->TotalDocuments(), 0u);
  EXPECT_FALSE(UserLayerOf(*store_, "alice").has_value());
}

TEST_P(StoreTest, AUsersNewLabelCreatesTheGlobalClass) {
  UserLearn(*store_, "alice", "m1", "phishing", "verify your account");
  const auto global = store_->Stats();
  ASSERT_EQ(global->classes.size(), 3u);
  EXPECT_EQ(global->classes[2], (model::ClassStats{"phishing", 0, 0}));
  EXPECT_EQ((*store_->UserStats("alice"))->classes[2], (model::ClassStats{"phishing", 1, 3}));
  // Another user's layer, older than the class, reads with it as 0.
  Learn(*store_, "g", "spam", "send us");
  UserLearn(*store_, "bob", "m1", "ham", "review");
  EXPECT_EQ((*store_->UserStats("bob"))->classes.size(), 3u);
}

TEST_P(StoreTest, UserBatchEqualsSequentialApplies) {
  TempDir sequential_dir;
  auto sequential = GetParam().open(sequential_dir);
  std::vector<model::Delta> deltas;
  const auto record = [&](const std::string& user, const std::string& id, const std::string& label,
                          const std::string& text, bool global) {
    const auto stats = sequential->Stats();
    model::LearnPlan plan;
    if (global)
      plan = model::PlanLearn(id, label, BagOfWords(text), *sequential->FindLearned(id), *stats);
    if (label.empty()) {
      model::AddUserForget(plan.delta, user, id, **sequential->FindUserLearned(user, id), *stats);
    } else {
      (void)model::AddUserLearn(plan.delta, user, id, label, BagOfWords(text),
                                *sequential->FindUserLearned(user, id), *stats);
    }
    ASSERT_TRUE(sequential->Apply(plan.delta).has_value());
    deltas.push_back(plan.delta);
  };
  record("alice", "m1", "spam", "cheap pills now", true);
  record("bob", "m1", "ham", "cheap pills now", false);
  record("alice", "m1", "ham", "cheap pills now", false);
  record("alice", "m2", "spam", "send us your password", false);
  record("bob", "m1", "", "", false);
  record("al", "m3", "phishing", "verify your account", false);
  const auto results = store_->ApplyBatch(deltas);
  ASSERT_TRUE(results.has_value()) << results.error().message;
  for (const auto& result : *results) EXPECT_TRUE(result.has_value()) << result.error().message;
  ExpectSameModel(*store_, *sequential, {"m1", "m2", "m3"});
  for (const char* user : {"alice", "bob", "al"}) {
    ExpectSameLayer(UserLayerOf(*store_, user), UserLayerOf(*sequential, user));
    for (const char* id : {"m1", "m2", "m3"}) {
      EXPECT_EQ(*store_->FindUserLearned(user, id), *sequential->FindUserLearned(user, id));
    }
  }
  EXPECT_EQ(store_->UserFigures().users, 2u);
}

TEST_P(StoreTest, DeleteUserRemovesAllOfOneUserAndNoOneElse) {
  Learn(*store_, "g", "spam", "cheap pills");
  UserLearn(*store_, "alice", "m1", "spam", "cheap pills now", false, {"feedback", 10});
  UserLearn(*store_, "alice", "m2", "ham", "lunch", false, {"feedback", 20});
  UserLearn(*store_, "alice2", "m1", "spam", "cheap", false, {"feedback", 10});
  UserLearn(*store_, "alic", "m1", "ham", "now", false, {"feedback", 10});
  const auto global_before = *store_->Stats();
  const auto alice2 = UserLayerOf(*store_, "alice2");
  const auto alic = UserLayerOf(*store_, "alic");
  ASSERT_TRUE(UserLayerOf(*store_, "alice").has_value());  // In memory now.
  EXPECT_EQ(store_->UserFigures().users, 3u);

  ASSERT_TRUE(store_->DeleteUser("alice", "5-1").has_value());
  EXPECT_FALSE(UserLayerOf(*store_, "alice").has_value());
  EXPECT_FALSE(store_->UserStats("alice")->has_value());
  EXPECT_FALSE(store_->FindUserLearned("alice", "m1")->has_value());
  EXPECT_TRUE(store_->ListUserLearned("alice", "feedback", 0, 100, 10)->empty());
  EXPECT_EQ(store_->StreamPosition(), "5-1");
  ExpectSameLayer(UserLayerOf(*store_, "alice2"), alice2);
  ExpectSameLayer(UserLayerOf(*store_, "alic"), alic);
  EXPECT_EQ(*store_->Stats(), global_before);
  EXPECT_EQ(store_->UserFigures().users, 2u);
  // Deleting again, or a user who never had a layer, succeeds and changes nothing.
  EXPECT_TRUE(store_->DeleteUser("alice").has_value());
  EXPECT_TRUE(store_->DeleteUser("nobody").has_value());
  EXPECT_EQ(store_->UserFigures().users, 2u);
  // The user may start over.
  EXPECT_EQ(UserLearn(*store_, "alice", "m1", "ham", "cheap"), model::LearnStatus::kLearned);
  EXPECT_EQ((*store_->UserStats("alice"))->classes[1], (model::ClassStats{"ham", 1, 1}));
}

TEST_P(StoreTest, AUserPastTheDistinctTokenLimitIsRefusedWhole) {
  TempDir limited_dir;
  auto store = GetParam().open_limited(limited_dir, 5);
  UserLearn(*store, "alice", "m1", "spam", "one two three");
  const auto layer_before = UserLayerOf(*store, "alice");
  const auto global_before = *store->Stats();
  // 3 known + 3 new = 6 distinct: refused, the global part with it.
  const auto stats = store->Stats();
  auto plan =
      model::PlanLearn("m2", "spam", BagOfWords("one cheap pills now"), std::nullopt, *stats);
  ASSERT_EQ(model::AddUserLearn(plan.delta, "alice", "m2", "spam",
                                BagOfWords("one cheap pills now"), std::nullopt, *stats),
            model::LearnStatus::kLearned);
  const auto applied = store->Apply(plan.delta);
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(applied.error().message.find("alice"), std::string::npos) << applied.error().message;
  EXPECT_EQ(*store->Stats(), global_before);
  ExpectSameLayer(UserLayerOf(*store, "alice"), layer_before);
  EXPECT_FALSE(store->FindUserLearned("alice", "m2")->has_value());
  // Up to the limit is fine, and known tokens always are; relearn and forget at the limit too.
  EXPECT_EQ(UserLearn(*store, "alice", "m3", "ham", "one cheap pills"),
            model::LearnStatus::kLearned);
  EXPECT_EQ((*store->UserStats("alice"))->vocabulary_size, 5u);
  EXPECT_EQ(UserLearn(*store, "alice", "m4", "ham", "one two two"), model::LearnStatus::kLearned);
  EXPECT_EQ(UserLearn(*store, "alice", "m1", "ham", "one two three"),
            model::LearnStatus::kRelearned);
  UserForget(*store, "alice", "m3");
  EXPECT_EQ((*store->UserStats("alice"))->vocabulary_size, 3u);
  // Another user has a limit of its own.
  EXPECT_EQ(UserLearn(*store, "bob", "m1", "spam", "a b c d e"), model::LearnStatus::kLearned);
}

TEST_P(StoreTest, ListUserLearnedBySourceAndTimeWindow) {
  using Ids_ = std::vector<std::string>;
  UserLearn(*store_, "alice", "a", "spam", "send us", false, {"mx1", 100});
  UserLearn(*store_, "alice", "b", "spam", "your password", false, {"mx1", 200});
  UserLearn(*store_, "alice", "c", "ham", "review", false, {"feedback", 150});
  UserLearn(*store_, "bob", "d", "ham", "review", false, {"mx1", 150});
  LearnFrom(*store_, "e", "spam", "send", {"mx1", 150});
  EXPECT_EQ(Ids(store_->ListUserLearned("alice", "mx1", 0, 1000, 100)), (Ids_{"a", "b"}));
  EXPECT_EQ(Ids(store_->ListUserLearned("alice", "mx1", 150, 1000, 100)), (Ids_{"b"}));
  EXPECT_EQ(Ids(store_->ListUserLearned("alice", "mx1", 0, 1000, 1)), (Ids_{"a"}));
  EXPECT_EQ(Ids(store_->ListUserLearned("bob", "mx1", 0, 1000, 100)), (Ids_{"d"}));
  EXPECT_EQ(Ids(store_->ListLearned("mx1", 0, 1000, 100)), (Ids_{"e"}));
  // A relearn through another source moves the record; a forget removes it.
  UserLearn(*store_, "alice", "b", "ham", "your password", false, {"feedback", 300});
  EXPECT_EQ(Ids(store_->ListUserLearned("alice", "mx1", 0, 1000, 100)), (Ids_{"a"}));
  EXPECT_EQ(Ids(store_->ListUserLearned("alice", "feedback", 0, 1000, 100)), (Ids_{"c", "b"}));
  UserForget(*store_, "alice", "c");
  EXPECT_EQ(Ids(store_->ListUserLearned("alice", "feedback", 0, 1000, 100)), (Ids_{"b"}));
}

TEST_P(StoreTest, UserLastLearnedIsTheNewestOfTheUsersOwnRecords) {
  EXPECT_EQ(*store_->UserLastLearned("alice"), std::nullopt);
  UserLearn(*store_, "alice", "a", "spam", "send us", false, {"mx1", 300});
  UserLearn(*store_, "alice", "b", "ham", "review", false, {"feedback", 100});
  UserLearn(*store_, "bob", "c", "ham", "review", false, {"mx1", 900});
  LearnFrom(*store_, "d", "spam", "send", {"mx1", 1000});
  EXPECT_EQ(*store_->UserLastLearned("alice"), 300);
  EXPECT_EQ(*store_->UserLastLearned("bob"), 900);
  UserLearn(*store_, "alice", "b", "spam", "review", false, {"feedback", 500});  // Relearned.
  EXPECT_EQ(*store_->UserLastLearned("alice"), 500);
  UserForget(*store_, "alice", "b");
  EXPECT_EQ(*store_->UserLastLearned("alice"), 300);
  ASSERT_TRUE(store_->DeleteUser("alice").has_value());
  EXPECT_EQ(*store_->UserLastLearned("alice"), std::nullopt);
  EXPECT_EQ(store_->UserLastLearned("").error().code, ErrorCode::kInvalidArgument);
}

TEST_P(StoreTest, BadUserIdsAreRefused) {
  const std::string bad("a\0b", 3);
  EXPECT_EQ(store_->ReadUser(bad, *store_->Stats(), {}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(store_->UserStats("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(store_->FindUserLearned(bad, "m").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(store_->DeleteUser(bad).error().code, ErrorCode::kInvalidArgument);
  model::Delta delta;
  delta.user = model::UserLayerChange{bad, {}, {{0, 1}}, "m", std::nullopt, std::nullopt};
  EXPECT_EQ(store_->Apply(delta).error().code, ErrorCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, StoreTest,
    ::testing::Values(
        Backend{"Memory", [](const TempDir&) { return std::unique_ptr<Store>(new MemoryStore()); },
                [](const TempDir&, std::uint64_t limit) {
                  return std::unique_ptr<Store>(new MemoryStore(limit));
                }},
        Backend{"Rocksdb", OpenRocksdb, OpenRocksdbLimited}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace nbspamd::storage
