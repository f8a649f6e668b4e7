#include "core/autolearn.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "core/spam_filter.h"
#include "model/calibration.h"
#include "storage/memory_store.h"
#include "storage/testing/forwarding_store.h"

namespace nbspamd::core {
namespace {

model::ModelStats Documents(std::uint64_t spam, std::uint64_t ham) {
  model::ModelStats stats;
  stats.classes = {{"spam", spam, spam * 10}, {"ham", ham, ham * 10}};
  return stats;
}

TEST(AutolearnTest, OnlyAConfidentAgreeingVerdictChoosesAClass) {
  const AutolearnOptions options{
      .enabled = true, .spam_confidence = 0.99, .ham_confidence = 0.01, .max_class_ratio = 3};
  using model::Verdict;
  EXPECT_EQ(ConfidentClass(options, {"m", 0.995, Verdict::kSpam}), "spam");
  EXPECT_EQ(ConfidentClass(options, {"m", 0.99, Verdict::kSpam}), "spam");
  EXPECT_EQ(ConfidentClass(options, {"m", 0.005, Verdict::kHam}), "ham");
  EXPECT_EQ(ConfidentClass(options, {"m", 0.98, Verdict::kSpam}), std::nullopt);
  EXPECT_EQ(ConfidentClass(options, {"m", 0.02, Verdict::kHam}), std::nullopt);
  // A verdict that does not agree with the confidence (the thresholds say unsure): nothing.
  EXPECT_EQ(ConfidentClass(options, {"m", 0.995, Verdict::kUnsure}), std::nullopt);
  EXPECT_EQ(ConfidentClass(options, {"m", 0.005, Verdict::kUnsure}), std::nullopt);
  EXPECT_EQ(ConfidentClass(options, {"m", std::nullopt, Verdict::kSpam}), std::nullopt);
}

TEST(AutolearnTest, TheBalanceGuardStopsAClassFarAhead) {
  const AutolearnOptions options{.enabled = true, .max_class_ratio = 3};
  EXPECT_TRUE(BalanceAllows(options, "spam", Documents(29, 10)));
  EXPECT_FALSE(BalanceAllows(options, "spam", Documents(30, 10)));
  EXPECT_TRUE(BalanceAllows(options, "ham", Documents(30, 10)));
  EXPECT_FALSE(BalanceAllows(options, "ham", Documents(1, 3)));
  EXPECT_FALSE(BalanceAllows(options, "ham", Documents(0, 0)));
  EXPECT_EQ(AutolearnSkipName(AutolearnSkip::kQueueFull), "queue_full");
  EXPECT_EQ(AutolearnSkipName(AutolearnSkip::kAlreadyLearned), "already_learned");
}

// A MemoryStore whose writes wait at a gate until the test opens it.
class GatedAutolearnStore final : public storage::testing::ForwardingStore {
 public:
  std::expected<storage::BatchResults, Error> ApplyBatch(
      std::span<const model::Delta> deltas) override {
    std::unique_lock lock(mutex_);
    ++writes_;
    entered_.notify_all();
    open_.wait(lock, [this] { return open_gate_; });
    return ForwardingStore::ApplyBatch(deltas);
  }
  void WaitForAWrite() {
    std::unique_lock lock(mutex_);
    entered_.wait(lock, [this] { return writes_ > 0; });
  }
  void Open() {
    std::lock_guard lock(mutex_);
    open_gate_ = true;
    open_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable entered_, open_;
  int writes_ = 0;
  bool open_gate_ = false;
};

TEST(AutolearnTest, AFullQueueDropsTheLearnAndCountsItWithoutWaiting) {
  GatedAutolearnStore store;
  TrainingWriter writer(store);
  Autolearner autolearner({.enabled = true, .queue_limit = 2}, writer, [] { return 5; });
  std::promise<void> first_done;
  writer.Learn({"held", "ham", TokenBag{{{1, 1}}, {}}, {}},
               [&first_done](auto) { first_done.set_value(); });
  store.WaitForAWrite();  // The writer is stuck in the write of "held".
  const model::ModelStats stats = Documents(10, 10);
  const std::vector<BagEntry> bag{{7, 1}};
  for (const char* id : {"a", "b", "c"}) {
    autolearner.Consider({id, 0.9999, model::Verdict::kSpam}, stats, bag);
  }
  AutolearnFigures figures = autolearner.Figures();
  EXPECT_EQ(figures.skipped[static_cast<std::size_t>(AutolearnSkip::kQueueFull)], 1u);
  store.Open();
  first_done.get_future().get();
  writer.Stop();  // Drains the queue.
  figures = autolearner.Figures();
  EXPECT_EQ(figures.learned_spam, 2u);
  EXPECT_EQ(figures.learned_ham, 0u);
  const auto record = store.FindLearned("b");
  ASSERT_TRUE(record.has_value() && record->has_value());
  EXPECT_EQ((*record)->origin, (model::LearnOrigin{"autolearn", 5}));
  EXPECT_FALSE(store.FindLearned("c")->has_value());
}

// A filter over a memory store, trained on 40 spam and 40 ham so that spam_confidence is given.
class AutolearnFilterTest : public ::testing::Test {
 protected:
  // Thresholds that 40 messages of feedback a class reach (Platt's targets keep spam_confidence
  // below (S + 1) / (S + 2) at first).
  static constexpr AutolearnOptions kOn{
      .enabled = true, .spam_confidence = 0.9, .ham_confidence = 0.1, .max_class_ratio = 3};

  void Start(AutolearnOptions autolearn) {
    auto store = std::make_unique<storage::MemoryStore>();
    store_ = store.get();
    SpamFilterOptions options;
    options.autolearn = autolearn;
    filter_ = std::make_unique<SpamFilter>(std::move(store), options);
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(filter_->Train(Text(kSpammy), "spam", "s" + std::to_string(i)).has_value());
      ASSERT_TRUE(filter_->Train(Text(kHammy), "ham", "h" + std::to_string(i)).has_value());
    }
    ASSERT_TRUE(filter_->Calibration()->ready());
  }

  std::string Text(const std::vector<std::string>& words) {
    std::string text;
    for (int i = 0; i < 5; ++i) text += words[random_() % words.size()] + " ";
    return text;
  }

  // Waits until every training request queued so far is written: a forget of an unknown id goes
  // through the writer after them.
  void Drain() { EXPECT_EQ(filter_->ForgetId("no-such-id").error().code, ErrorCode::kNotFound); }

  std::optional<model::LedgerEntry> Record(std::string_view id) {
    auto found = store_->FindLearned(id);
    EXPECT_TRUE(found.has_value());
    return found ? *found : std::nullopt;
  }

  std::uint64_t Skipped(AutolearnSkip skip) {
    return filter_->Autolearn()->skipped[static_cast<std::size_t>(skip)];
  }

  const std::vector<std::string> kSpammy = {"cheap", "pills", "winner", "prize", "casino", "free"};
  const std::vector<std::string> kHammy = {"lunch", "meeting", "report", "agenda", "team", "notes"};
  const std::string kConfidentSpam = "cheap pills winner prize casino free cheap pills";
  std::mt19937 random_{5};
  storage::MemoryStore* store_ = nullptr;
  std::unique_ptr<SpamFilter> filter_;
};

TEST_F(AutolearnFilterTest, OffByDefaultItLearnsNothing) {
  Start(SpamFilterOptions{}.autolearn);
  ASSERT_FALSE(SpamFilterOptions{}.autolearn.enabled);
  const auto verdict = filter_->Classify(kConfidentSpam, 0, "m1");
  ASSERT_TRUE(verdict.has_value());
  ASSERT_GE(*verdict->spam_confidence, kOn.spam_confidence);
  Drain();
  EXPECT_FALSE(Record("m1").has_value());
  EXPECT_FALSE(filter_->Autolearn().has_value());
  EXPECT_FALSE(filter_->Status().autolearn.has_value());
}

TEST_F(AutolearnFilterTest, AConfidentVerdictIsLearnedOnceThroughTheLedger) {
  Start(kOn);
  const auto documents = filter_->Stats()->classes[0].documents;
  const auto calibration = filter_->Calibration()->histogram();
  const auto verdict = filter_->Classify(kConfidentSpam, 0, "m1");
  ASSERT_TRUE(verdict.has_value());
  ASSERT_GE(*verdict->spam_confidence, kOn.spam_confidence);
  Drain();
  const auto record = Record("m1");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->label, "spam");
  EXPECT_EQ(record->origin.source, "autolearn");
  EXPECT_EQ(filter_->Stats()->classes[0].documents, documents + 1);
  EXPECT_EQ(filter_->Autolearn()->learned_spam, 1u);
  // It calibrates nothing: the daemon's own verdict is not feedback.
  EXPECT_EQ(filter_->Calibration()->histogram(), calibration);
  // Classified again: already learned, nothing changes.
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0, "m1").has_value());
  Drain();
  EXPECT_EQ(filter_->Stats()->classes[0].documents, documents + 1);
  EXPECT_EQ(Skipped(AutolearnSkip::kAlreadyLearned), 1u);
  EXPECT_EQ(filter_->Autolearn()->learned_spam, 1u);
  // The key is the one a train of the message without an id uses: its content id.
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0).has_value());
  Drain();
  EXPECT_TRUE(Record(SpamFilter::ContentId(kConfidentSpam)).has_value());
  const auto trained = filter_->Train(kConfidentSpam, "spam", std::nullopt);
  ASSERT_TRUE(trained.has_value());
  EXPECT_EQ(trained->status, model::LearnStatus::kRelearned);  // Taken over, not learned twice.
  EXPECT_EQ(filter_->Stats()->classes[0].documents, documents + 2);
}

TEST_F(AutolearnFilterTest, AManualLabelAlwaysWins) {
  Start(kOn);
  // Learned by a person first: autolearn leaves the record alone, whatever its label.
  ASSERT_TRUE(filter_->Train(kConfidentSpam, "ham", "given").has_value());
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0, "given").has_value());
  Drain();
  EXPECT_EQ(Record("given")->label, "ham");
  EXPECT_EQ(Record("given")->origin.source, "");
  EXPECT_EQ(Skipped(AutolearnSkip::kAlreadyLearned), 1u);

  // Autolearned first: a person's later label relearns it and the record becomes theirs.
  const auto ham_documents = filter_->Stats()->classes[1].documents;
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0, "auto").has_value());
  Drain();
  ASSERT_EQ(Record("auto")->origin.source, "autolearn");
  const auto trained = filter_->Train(kConfidentSpam, "ham", "auto");
  ASSERT_TRUE(trained.has_value());
  EXPECT_EQ(trained->status, model::LearnStatus::kRelearned);
  EXPECT_EQ(Record("auto")->label, "ham");
  EXPECT_EQ(Record("auto")->origin.source, "");
  EXPECT_EQ(filter_->Stats()->classes[1].documents, ham_documents + 1);
  // And autolearn does not take it back.
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0, "auto").has_value());
  Drain();
  EXPECT_EQ(Record("auto")->label, "ham");
  EXPECT_TRUE(filter_->Rollback()
                  .ListLearned("autolearn", 0, std::numeric_limits<std::int64_t>::max(), 10)
                  ->empty());
}

TEST_F(AutolearnFilterTest, TheBalanceGuardHolds) {
  AutolearnOptions options = kOn;
  options.max_class_ratio = 1.0;  // 40 spam and 40 ham: spam may not lead.
  Start(options);
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0, "m1").has_value());
  Drain();
  EXPECT_FALSE(Record("m1").has_value());
  EXPECT_EQ(Skipped(AutolearnSkip::kBalance), 1u);
  EXPECT_EQ(filter_->Autolearn()->learned_spam, 0u);
}

TEST_F(AutolearnFilterTest, ARollbackOfTheSourceUndoesEveryAutolearn) {
  Start(kOn);
  const auto before = *filter_->Stats();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(filter_->Classify(kConfidentSpam + " " + std::to_string(i), 0).has_value());
  }
  Drain();
  ASSERT_EQ(filter_->Autolearn()->learned_spam, 5u);
  ASSERT_NE(*filter_->Stats(), before);
  std::promise<std::expected<std::uint64_t, Error>> rolled_back;
  filter_->Rollback().RollbackAsync("autolearn", 0, std::numeric_limits<std::int64_t>::max(), 1000,
                                    [&rolled_back](std::expected<std::uint64_t, Error> forgotten) {
                                      rolled_back.set_value(std::move(forgotten));
                                    });
  const auto forgotten = rolled_back.get_future().get();
  ASSERT_TRUE(forgotten.has_value());
  EXPECT_EQ(*forgotten, 5u);
  EXPECT_EQ(*filter_->Stats(), before);
}

TEST_F(AutolearnFilterTest, AClassifyWithAUserLearnsNothing) {
  Start(kOn);
  ASSERT_TRUE(filter_->Classify(kConfidentSpam, 0, "m1", "alice").has_value());
  Drain();
  EXPECT_FALSE(Record("m1").has_value());
}

}  // namespace
}  // namespace nbspamd::core
