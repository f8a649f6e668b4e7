#include "core/training_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "model/calibration.h"
#include "model/classifier.h"
#include "storage/memory_store.h"
#include "storage/testing/forwarding_store.h"
#include "tests/support/token_bags.h"

namespace nbspamd::core {
namespace {

using test_support::BagOf;

// A MemoryStore whose first ApplyBatch waits until the test opens the gate, so that the test
// can queue a whole group behind it; and whose ApplyBatch can be told to fail with an I/O error.
class GatedStore final : public storage::testing::ForwardingStore {
 public:
  std::expected<void, Error> DeleteUser(std::string_view user,
                                        std::string_view stream_position) override {
    std::lock_guard lock(mutex_);
    deleted_users_.emplace_back(user);
    return ForwardingStore::DeleteUser(user, stream_position);
  }

  std::expected<storage::BatchResults, Error> ApplyBatch(
      std::span<const model::Delta> deltas) override {
    std::unique_lock lock(mutex_);
    batch_sizes_.push_back(deltas.size());
    entered_.notify_all();
    open_.wait(lock, [this] { return gate_open_; });
    if (fail_writes_) return MakeError(ErrorCode::kInternal, "disk on fire");
    return ForwardingStore::ApplyBatch(deltas);
  }

  void WaitUntilAWriteIsHeld() {
    std::unique_lock lock(mutex_);
    entered_.wait(lock, [this] { return !batch_sizes_.empty(); });
  }
  void OpenGate() {
    std::lock_guard lock(mutex_);
    gate_open_ = true;
    open_.notify_all();
  }
  void FailWrites() {
    std::lock_guard lock(mutex_);
    fail_writes_ = true;
  }
  std::vector<std::size_t> BatchSizes() {
    std::lock_guard lock(mutex_);
    return batch_sizes_;
  }
  std::vector<std::string> DeletedUsers() {
    std::lock_guard lock(mutex_);
    return deleted_users_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable entered_, open_;
  bool gate_open_ = false;
  bool fail_writes_ = false;
  std::vector<std::size_t> batch_sizes_;
  std::vector<std::string> deleted_users_;
};

// Learns `tokens` as `label` under `id` and waits for the writer's answer. REQUIRES: it succeeds.
model::LearnStatus LearnAndWait(TrainingWriter& writer, const std::string& id,
                                const std::string& label, std::vector<BagEntry> tokens) {
  std::promise<std::expected<model::LearnStatus, Error>> done;
  writer.Learn({id, label, BagOf(std::move(tokens)), {}},
               [&](std::expected<model::LearnStatus, Error> status) { done.set_value(status); });
  auto status = done.get_future().get();
  EXPECT_TRUE(status.has_value()) << status.error().message;
  return status.value_or(model::LearnStatus::kUnchanged);
}

// Collects each completion's outcome, in the order the writer completes them.
struct Outcomes {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::expected<model::LearnStatus, Error>>> learned;
  std::vector<std::pair<std::string, std::expected<void, Error>>> forgotten;

  LearnCompletion OnLearn(std::string name) {
    return [this, name](std::expected<model::LearnStatus, Error> result) {
      std::lock_guard lock(mutex);
      learned.emplace_back(name, std::move(result));
    };
  }
  ForgetCompletion OnForget(std::string name) {
    return [this, name](std::expected<void, Error> result) {
      std::lock_guard lock(mutex);
      forgotten.emplace_back(name, std::move(result));
    };
  }
};

TEST(TrainingWriterTest, ACompletionThatThrowsIsCountedAndTheOthersStillRun) {
  GatedStore store;
  store.OpenGate();
  Outcomes outcomes;
  TrainingWriter writer(store);
  writer.Learn({"a", "spam", BagOf({{1, 1}}), {}},
               [](std::expected<model::LearnStatus, Error>) { throw std::runtime_error("bug"); });
  writer.Forget("nothing", [](std::expected<void, Error>) { throw 42; });
  writer.Learn({"b", "ham", BagOf({{2, 1}}), {}}, outcomes.OnLearn("b"));
  writer.Stop();
  EXPECT_EQ(writer.CompletionExceptions(), 2u);
  ASSERT_EQ(outcomes.learned.size(), 1u);
  EXPECT_EQ(outcomes.learned[0].second, model::LearnStatus::kLearned);
  // After Stop the completion runs on the caller's thread, guarded alike.
  writer.Learn({"c", "ham", BagOf({{3, 1}}), {}},
               [](std::expected<model::LearnStatus, Error>) { throw std::runtime_error("late"); });
  EXPECT_EQ(writer.CompletionExceptions(), 3u);
}

// A store whose writes throw while `fail` holds: an int first, then a std::exception.
class ThrowingStore final : public storage::testing::ForwardingStore {
 public:
  std::expected<storage::BatchResults, Error> ApplyBatch(
      std::span<const model::Delta> deltas) override {
    const int n = throws_.fetch_add(1);
    if (n == 0) throw 42;  // No std::exception.
    if (n == 1) throw std::runtime_error("no memory for the batch");
    return ForwardingStore::ApplyBatch(deltas);
  }

 private:
  std::atomic<int> throws_ = 0;
};

// Writing a group that throws, whatever it throws, fails that group's requests with kInternal
// (each answered exactly once), is counted, and the writer thread goes on with the next group:
// without its net, the first throw would end the process (std::terminate).
TEST(TrainingWriterTest, AGroupWhoseWriteThrowsFailsAndTheWriterGoesOn) {
  ThrowingStore store;
  TrainingWriter writer(store);
  for (const char* id : {"a", "b"}) {
    std::promise<std::expected<model::LearnStatus, Error>> done;
    writer.Learn({id, "spam", BagOf({{1, 1}}), {}},
                 [&](std::expected<model::LearnStatus, Error> status) { done.set_value(status); });
    const auto status = done.get_future().get();
    ASSERT_FALSE(status.has_value()) << id;
    EXPECT_EQ(status.error().code, ErrorCode::kInternal) << status.error().message;
  }
  EXPECT_EQ(writer.GroupExceptions(), 2u);
  EXPECT_EQ(LearnAndWait(writer, "c", "spam", {{1, 1}}), model::LearnStatus::kLearned);
  EXPECT_EQ(store.Stats()->TotalDocuments(), 1u);
  writer.Stop();
}

TEST(TrainingWriterTest, AGroupSeesItsOwnLearnsRelearnsAndForgets) {
  GatedStore store;
  Outcomes outcomes;
  {
    TrainingWriter writer(store);
    writer.Learn({"first", "ham", BagOf({{9, 1}}), {}}, outcomes.OnLearn("first"));
    store.WaitUntilAWriteIsHeld();
    // Everything below is queued behind the held write, so it forms the second group.
    writer.Learn({"m", "spam", BagOf({{1, 2}, {2, 1}}), {}}, outcomes.OnLearn("m learned"));
    writer.Learn({"m", "spam", BagOf({{1, 2}, {2, 1}}), {}}, outcomes.OnLearn("m unchanged"));
    writer.Learn({"m", "ham", BagOf({{1, 2}, {2, 1}}), {}}, outcomes.OnLearn("m relearned"));
    writer.Forget("m", outcomes.OnForget("m forgotten"));
    writer.Forget("m", outcomes.OnForget("m not found"));
    writer.Learn({"m", "phishing", BagOf({{3, 1}}), {}}, outcomes.OnLearn("m new class"));
    writer.Learn({"p", "phishing", BagOf({{3, 2}}), {}}, outcomes.OnLearn("p same new class"));
    writer.Forget("first", outcomes.OnForget("first forgotten"));
    store.OpenGate();
    writer.Stop();
    EXPECT_EQ(writer.GroupCount(), 2u);
    EXPECT_EQ(writer.RequestCount(), 9u);
  }
  EXPECT_EQ(store.BatchSizes(), (std::vector<std::size_t>{1, 6}));

  ASSERT_EQ(outcomes.learned.size(), 6u);
  const std::vector<std::pair<std::string, model::LearnStatus>> expected_learns = {
      {"first", model::LearnStatus::kLearned},
      {"m learned", model::LearnStatus::kLearned},
      {"m unchanged", model::LearnStatus::kUnchanged},
      {"m relearned", model::LearnStatus::kRelearned},
      {"m new class", model::LearnStatus::kLearned},
      {"p same new class", model::LearnStatus::kLearned}};
  for (std::size_t i = 0; i < expected_learns.size(); ++i) {
    EXPECT_EQ(outcomes.learned[i].first, expected_learns[i].first);
    ASSERT_TRUE(outcomes.learned[i].second.has_value()) << outcomes.learned[i].first;
    EXPECT_EQ(*outcomes.learned[i].second, expected_learns[i].second) << expected_learns[i].first;
  }
  ASSERT_EQ(outcomes.forgotten.size(), 3u);
  EXPECT_TRUE(outcomes.forgotten[0].second.has_value());
  ASSERT_FALSE(outcomes.forgotten[1].second.has_value());
  EXPECT_EQ(outcomes.forgotten[1].second.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(outcomes.forgotten[2].second.has_value());

  // The model is m and p as phishing, nothing else.
  const auto stats = store.Stats();
  ASSERT_EQ(stats->classes.size(), 3u);
  EXPECT_EQ(stats->classes[0], (model::ClassStats{"spam", 0, 0}));
  EXPECT_EQ(stats->classes[1], (model::ClassStats{"ham", 0, 0}));
  EXPECT_EQ(stats->classes[2], (model::ClassStats{"phishing", 2, 3}));
  EXPECT_EQ(stats->vocabulary_size, 1u);
  EXPECT_EQ(**store.FindLearned("m"), (model::LedgerEntry{"phishing", {{3, 1}}, {}, std::nullopt}));
  EXPECT_FALSE(store.FindLearned("first")->has_value());
}

TEST(TrainingWriterTest, AGroupSeesItsOwnUserRecordsAndKeepsLayersApart) {
  GatedStore store;
  Outcomes outcomes;
  {
    TrainingWriter writer(store);
    writer.Learn({"first", "ham", BagOf({{9, 1}}), {}}, outcomes.OnLearn("first"));
    store.WaitUntilAWriteIsHeld();
    // Queued behind the held write: the second group.
    const UserTarget alice{"alice", false};
    writer.LearnForUser({"m", "spam", BagOf({{1, 2}}), {}}, alice, outcomes.OnLearn("a learned"));
    writer.LearnForUser({"m", "spam", BagOf({{1, 2}}), {}}, alice, outcomes.OnLearn("a unchanged"));
    writer.LearnForUser({"m", "ham", BagOf({{1, 2}}), {}}, alice, outcomes.OnLearn("a relearned"));
    writer.ForgetForUser("m", alice, outcomes.OnForget("a forgotten"));
    writer.ForgetForUser("m", alice, outcomes.OnForget("a not found"));
    writer.LearnForUser({"m", "spam", BagOf({{1, 2}}), {}}, {"bob", false},
                        outcomes.OnLearn("b learned"));
    writer.LearnForUser({"n", "spam", BagOf({{2, 1}}), {}}, {"carol", true},
                        outcomes.OnLearn("c learned, global too"));
    // A delete is written alone, in order: after alice's x, before alice's y.
    writer.LearnForUser({"x", "spam", BagOf({{3, 1}}), {}}, alice, outcomes.OnLearn("a x"));
    writer.DeleteUser("alice", outcomes.OnForget("a deleted"));
    writer.LearnForUser({"y", "ham", BagOf({{4, 1}}), {}}, alice, outcomes.OnLearn("a y"));
    store.OpenGate();
    writer.Stop();
    EXPECT_EQ(writer.RequestCount(), 11u);
  }
  EXPECT_EQ(store.BatchSizes(), (std::vector<std::size_t>{1, 6, 1}));
  EXPECT_EQ(store.DeletedUsers(), (std::vector<std::string>{"alice"}));

  const std::vector<std::pair<std::string, model::LearnStatus>> expected_learns = {
      {"first", model::LearnStatus::kLearned},
      {"a learned", model::LearnStatus::kLearned},
      {"a unchanged", model::LearnStatus::kUnchanged},
      {"a relearned", model::LearnStatus::kRelearned},
      {"b learned", model::LearnStatus::kLearned},
      {"c learned, global too", model::LearnStatus::kLearned},
      {"a x", model::LearnStatus::kLearned},
      {"a y", model::LearnStatus::kLearned}};
  ASSERT_EQ(outcomes.learned.size(), expected_learns.size());
  for (std::size_t i = 0; i < expected_learns.size(); ++i) {
    EXPECT_EQ(outcomes.learned[i].first, expected_learns[i].first);
    ASSERT_TRUE(outcomes.learned[i].second.has_value()) << outcomes.learned[i].first;
    EXPECT_EQ(*outcomes.learned[i].second, expected_learns[i].second) << expected_learns[i].first;
  }
  ASSERT_EQ(outcomes.forgotten.size(), 3u);
  EXPECT_TRUE(outcomes.forgotten[0].second.has_value());
  ASSERT_FALSE(outcomes.forgotten[1].second.has_value());
  EXPECT_EQ(outcomes.forgotten[1].second.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(outcomes.forgotten[2].first, "a deleted");
  EXPECT_TRUE(outcomes.forgotten[2].second.has_value());

  // The global model: "first" as ham and carol's n as spam; m is in no global ledger.
  const auto stats = store.Stats();
  EXPECT_EQ(stats->classes[0], (model::ClassStats{"spam", 1, 1}));
  EXPECT_EQ(stats->classes[1], (model::ClassStats{"ham", 1, 1}));
  EXPECT_FALSE(store.FindLearned("m")->has_value());
  ASSERT_TRUE(store.FindLearned("n")->has_value());
  // Alice has only y (x went with the delete), bob m as spam, carol n as spam.
  EXPECT_FALSE(store.FindUserLearned("alice", "m")->has_value());
  EXPECT_FALSE(store.FindUserLearned("alice", "x")->has_value());
  ASSERT_TRUE(store.FindUserLearned("alice", "y")->has_value());
  const auto alice = store.UserStats("alice");
  ASSERT_TRUE(alice.has_value() && alice->has_value());
  EXPECT_EQ((*alice)->classes[0], (model::ClassStats{"spam", 0, 0}));
  EXPECT_EQ((*alice)->classes[1], (model::ClassStats{"ham", 1, 1}));
  EXPECT_EQ((**store.FindUserLearned("bob", "m")).label, "spam");
  EXPECT_EQ((**store.FindUserLearned("carol", "n")).label, "spam");
}

// The held-out scores a group records are those of learning its requests one at a time: each
// new message is scored against the model that the requests before it (in the same group too)
// leave. Checked against a writer that writes every request alone.
TEST(TrainingWriterTest, HeldOutScoresDoNotDependOnTheGrouping) {
  const std::vector<std::tuple<std::string, std::string, std::vector<BagEntry>>> requests = {
      {"s1", "spam", {{1, 2}, {2, 1}}}, {"h1", "ham", {{3, 1}, {4, 1}}},
      {"s2", "spam", {{1, 1}, {5, 1}}}, {"h2", "ham", {{2, 1}, {3, 2}, {6, 1}}},
      {"s1", "ham", {{1, 2}, {2, 1}}},  {"x", "phishing", {{7, 1}}},
      {"s3", "spam", {{1, 1}, {7, 1}}}, {"h3", "ham", {{4, 1}, {8, 1}}}};
  GatedStore grouped;
  storage::MemoryStore alone;
  {
    TrainingWriter writer(grouped);
    Outcomes outcomes;
    writer.Learn({"first", "ham", BagOf({{9, 1}}), {}}, outcomes.OnLearn("first"));
    grouped.WaitUntilAWriteIsHeld();
    for (const auto& [id, label, tokens] : requests) {
      writer.Learn({id, label, BagOf(tokens), {}}, outcomes.OnLearn(id));
    }
    grouped.OpenGate();
    writer.Stop();
    ASSERT_EQ(grouped.BatchSizes().size(), 2u) << "the requests formed one group";
  }
  {
    TrainingWriter writer(alone);
    const auto learn = [&](const std::string& id, const std::string& label,
                           const std::vector<BagEntry>& tokens) {
      std::promise<void> done;
      writer.Learn({id, label, BagOf(tokens), {}},
                   [&](std::expected<model::LearnStatus, Error>) { done.set_value(); });
      done.get_future().wait();
    };
    learn("first", "ham", {{9, 1}});
    for (const auto& [id, label, tokens] : requests) learn(id, label, tokens);
  }
  int scored = 0;
  for (const std::string id : {"first", "s1", "h1", "s2", "h2", "x", "s3", "h3"}) {
    const auto a = **grouped.FindLearned(id);
    const auto b = **alone.FindLearned(id);
    EXPECT_EQ(a, b) << id;
    if (a.held_out) ++scored;
  }
  // "first" and s1 came before the model had both classes; s1's relearn kept its first (none).
  EXPECT_EQ(scored, 6);
  EXPECT_FALSE((**grouped.FindLearned("s1")).held_out.has_value());
  EXPECT_EQ(*grouped.Feedback(), *alone.Feedback());
}

TEST(TrainingWriterTest, TheHeldOutScoreIsTheScoreOfTheModelBeforeTheLearn) {
  storage::MemoryStore store;
  TrainingWriter writer(store, {}, {.alpha = 0.5, .score_min_weight = 0.3});
  const auto learn = [&](const std::string& id, const std::string& label,
                         std::vector<BagEntry> tokens) {
    std::promise<void> done;
    writer.Learn({id, label, BagOf(std::move(tokens)), {}},
                 [&](std::expected<model::LearnStatus, Error>) { done.set_value(); });
    done.get_future().wait();
  };
  learn("a", "spam", {{1, 2}, {2, 1}});
  learn("b", "ham", {{2, 1}, {3, 1}});
  const TokenBag next = BagOf({{1, 1}, {3, 1}, {4, 1}});
  const auto before =
      model::Classify(next, store.Read(next.entries), {.alpha = 0.5, .score_min_weight = 0.3});
  ASSERT_TRUE(before.has_value() && before->score.has_value());
  learn("c", "spam", next.entries);
  EXPECT_EQ((**store.FindLearned("c")).held_out,
            (model::HeldOutScore{model::kScoreScale, *before->score}));
  EXPECT_FALSE((**store.FindLearned("a")).held_out.has_value()) << "no ham yet: no score";
}

// Train on or near error, with alpha 1 and every weight in the score: the score of a bag of token
// 1 alone is its weight log(P(1|spam) / P(1|ham)).
TEST(TrainingWriterTest, UnderAMarginOnlyErrorsAndNearMissesAreCounted) {
  storage::MemoryStore store;
  TrainingWriter writer(store, {}, {.alpha = 1, .score_min_weight = 0}, {.margin = 0.5});
  const auto learn = [&](const std::string& id, const std::string& label,
                         std::vector<BagEntry> tokens) {
    return LearnAndWait(writer, id, label, std::move(tokens));
  };
  const auto documents = [&](std::size_t c) { return store.Stats()->classes.at(c).documents; };
  // Nothing can be scored before both classes have a document: both are counted.
  EXPECT_EQ(learn("a", "spam", {{1, 1}}), model::LearnStatus::kLearned);
  EXPECT_EQ(learn("b", "ham", {{2, 1}}), model::LearnStatus::kLearned);
  // P(1|spam) = (1 + 1) / (1 + 2) = 2/3, P(1|ham) = (0 + 1) / (1 + 2) = 1/3: score log 2 = 0.693,
  // right by more than 0.5: only checked.
  EXPECT_EQ(learn("c", "spam", {{1, 1}}), model::LearnStatus::kChecked);
  EXPECT_EQ(learn("x", "spam", {{1, 1}}), model::LearnStatus::kChecked);
  EXPECT_EQ(learn("x", "spam", {{1, 1}}), model::LearnStatus::kChecked) << "still right";
  EXPECT_EQ(documents(0), 1u);
  const model::LedgerEntry c = **store.FindLearned("c");
  EXPECT_TRUE(c.checked);
  EXPECT_TRUE(c.tokens.empty());
  ASSERT_TRUE(c.held_out.has_value());
  EXPECT_NEAR(c.held_out->score, std::log(2.0), 1e-12);
  // The same message as ham was wrong by 0.693: counted. A correction of a checked record is too.
  EXPECT_EQ(learn("x", "ham", {{1, 1}}), model::LearnStatus::kRelearned);
  EXPECT_EQ(documents(1), 2u);
  EXPECT_FALSE((**store.FindLearned("x")).checked);
  // Learned again (a second pass), c scores log((2/3) / (2/4)) = 0.288 now, within the margin.
  EXPECT_EQ(learn("c", "spam", {{1, 1}}), model::LearnStatus::kLearned);
  EXPECT_EQ(documents(0), 2u);
  EXPECT_EQ(learn("c", "spam", {{1, 1}}), model::LearnStatus::kUnchanged);
  const model::LedgerEntry counted = **store.FindLearned("c");
  EXPECT_FALSE(counted.checked);
  EXPECT_EQ(counted.held_out, c.held_out) << "the first held-out score stays";
  const model::Snapshot snapshot = store.Read(BagOf({{1, 1}}).entries);
  EXPECT_EQ(snapshot.counts, (std::vector<std::uint64_t>{2, 1})) << "n_1,spam and n_1,ham";
}

TEST(TrainingWriterTest, UnderAWarmUpEachClassCountsItsFirstDocuments) {
  storage::MemoryStore store;
  TrainingWriter writer(store, {}, {.alpha = 1, .score_min_weight = 0},
                        {.margin = 0.5, .warmup_documents = 2});
  const auto learn = [&](const std::string& id, const std::string& label,
                         std::vector<BagEntry> tokens) {
    return LearnAndWait(writer, id, label, std::move(tokens));
  };
  EXPECT_EQ(learn("a", "spam", {{1, 1}}), model::LearnStatus::kLearned);
  EXPECT_EQ(learn("b", "ham", {{2, 1}}), model::LearnStatus::kLearned);
  // Scored log 2 = 0.693, right beyond the margin, but spam holds 1 document, fewer than 2.
  EXPECT_EQ(learn("c", "spam", {{1, 1}}), model::LearnStatus::kLearned);
  // Now spam holds 2: the regime applies (the score is log((3/4) / (1/3)) = 0.81).
  EXPECT_EQ(learn("d", "spam", {{1, 1}}), model::LearnStatus::kChecked);
  // Ham still holds 1: a ham scored right is counted all the same.
  EXPECT_EQ(learn("e", "ham", {{2, 1}}), model::LearnStatus::kLearned);
}

TEST(TrainingWriterTest, AFailedWriteFailsEveryAnswerThatRestsOnIt) {
  GatedStore store;
  Outcomes outcomes;
  {
    TrainingWriter writer(store);
    writer.Learn({"a", "spam", BagOf({{1, 1}}), {}}, outcomes.OnLearn("a"));
    store.WaitUntilAWriteIsHeld();
    store.FailWrites();
    writer.Learn({"b", "spam", BagOf({{2, 1}}), {}}, outcomes.OnLearn("b"));
    writer.Learn({"b", "spam", BagOf({{2, 1}}), {}}, outcomes.OnLearn("b again"));
    writer.Forget("never", outcomes.OnForget("never"));
    store.OpenGate();
  }
  ASSERT_EQ(outcomes.learned.size(), 3u);
  for (const auto& [name, result] : outcomes.learned) {
    ASSERT_FALSE(result.has_value()) << name;
    EXPECT_EQ(result.error().code, ErrorCode::kInternal) << name;
  }
  // "b again" was unchanged only because of the write that failed; "never" did not rest on it.
  ASSERT_EQ(outcomes.forgotten.size(), 1u);
  EXPECT_EQ(outcomes.forgotten[0].second.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store.Stats()->TotalDocuments(), 0u);
}

TEST(TrainingWriterTest, GroupsRespectTheRequestCap) {
  GatedStore store;
  Outcomes outcomes;
  {
    TrainingWriter writer(store, {.max_requests = 3, .max_tokens = 1000});
    writer.Learn({"x", "spam", BagOf({{1, 1}}), {}}, outcomes.OnLearn("x"));
    store.WaitUntilAWriteIsHeld();
    for (int i = 0; i < 7; ++i) {
      writer.Learn({"id" + std::to_string(i), "ham", BagOf({{2, 1}}), {}}, outcomes.OnLearn("i"));
    }
    store.OpenGate();
  }
  EXPECT_EQ(store.BatchSizes(), (std::vector<std::size_t>{1, 3, 3, 1}));
  EXPECT_EQ(store.Stats()->TotalDocuments(), 8u);
}

TEST(TrainingWriterTest, RequestsAfterStopAreRefusedAtOnce) {
  storage::MemoryStore store;
  TrainingWriter writer(store);
  writer.Stop();
  writer.Stop();
  std::promise<std::expected<model::LearnStatus, Error>> result;
  writer.Learn({"a", "spam", BagOf({{1, 1}}), {}},
               [&](std::expected<model::LearnStatus, Error> r) { result.set_value(std::move(r)); });
  const auto learned = result.get_future().get();
  ASSERT_FALSE(learned.has_value());
  EXPECT_EQ(learned.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace nbspamd::core
