#include "core/model_expiry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/recording_log_test_util.h"
#include "storage/model_check.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_time.h"

namespace nbspamd::core {
namespace {

using test_support::kDay;
using test_support::kNever;

class ModelExpiryTest : public ::testing::Test {
 protected:
  ModelExpiryTest() { Open(); }

  void Open() {
    SpamFilterOptions options;
    options.clock = [this] { return now_.load(); };
    auto store = storage::RocksdbStore::Open(dir_.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    filter_ = std::make_unique<SpamFilter>(std::move(*store), options);
  }

  void TrainAt(std::int64_t day, const std::string& id, const std::string& label,
               const std::string& text) {
    now_ = day * kDay;
    auto trained = filter_->Train(text, label, id);
    ASSERT_TRUE(trained.has_value()) << trained.error().message;
  }

  double Score(const std::string& text) {
    auto outcome = filter_->Classify(text, 0);
    EXPECT_TRUE(outcome.has_value());
    return outcome ? outcome->result.log_odds.value_or(0) : 0;
  }

  double StorageProperty(std::string_view name) const {
    for (const storage::StorageProperty& property : filter_->StorageProperties()) {
      if (property.name == name) return property.value;
    }
    ADD_FAILURE() << "no property " << name;
    return -1;
  }

  TempDir dir_;
  std::atomic<std::int64_t> now_{0};
  std::unique_ptr<SpamFilter> filter_;
};

TEST_F(ModelExpiryTest, RetiresOnlyOldRecordsAndNoScoreOrCountChanges) {
  TrainAt(10, "s1", "spam", "cheap pills buy now cheap");
  TrainAt(20, "h1", "ham", "meeting notes for the project");
  TrainAt(30, "s2", "spam", "buy cheap watches now");
  TrainAt(90, "h2", "ham", "project meeting moved to friday");
  const model::ModelStats stats = *filter_->Stats();
  const auto histogram = filter_->Calibration()->histogram();
  const double spammy = Score("buy cheap pills");
  const double hammy = Score("project meeting on friday");

  const double logged = StorageProperty("nbspamd_storage_wal_bytes");
  ASSERT_GT(logged, 0);
  ASSERT_EQ(StorageProperty("nbspamd_storage_live_sst_bytes"), 0);

  ModelExpirySweep sweep(*filter_, {.ledger_retention = std::chrono::days(60)}, kNever);
  now_ = 100 * kDay;  // s1, h1 and s2 are older than 60 days; h2 is not.
  auto pass = sweep.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_EQ(pass->retired, 3u);
  // A pass that changed the model flushes what it wrote, so its logs go.
  EXPECT_LT(StorageProperty("nbspamd_storage_wal_bytes"), logged / 10);
  EXPECT_GT(StorageProperty("nbspamd_storage_live_sst_bytes"), 0);
  EXPECT_EQ(filter_->Upkeep().RetiredRecords(), 3u);
  EXPECT_EQ(*filter_->Stats(), stats);
  EXPECT_EQ(filter_->Calibration()->histogram(), histogram);
  EXPECT_EQ(Score("buy cheap pills"), spammy);
  EXPECT_EQ(Score("project meeting on friday"), hammy);
  EXPECT_EQ(sweep.SweepOnce()->retired, 0u);  // Nothing older is left.
  EXPECT_EQ(filter_->Upkeep().Expiry().passes, 2u);

  // A retired message can be neither forgotten nor moved to the other class: 410's error.
  auto forgotten = filter_->ForgetId("s1");
  ASSERT_FALSE(forgotten.has_value());
  EXPECT_EQ(forgotten.error().code, ErrorCode::kExpired);
  EXPECT_NE(forgotten.error().message.find("1970-01-11T00:00:00Z"), std::string::npos)
      << forgotten.error().message;
  auto relabelled = filter_->Train("cheap pills buy now cheap", "ham", "s1");
  ASSERT_FALSE(relabelled.has_value());
  EXPECT_EQ(relabelled.error().code, ErrorCode::kExpired);
  // Learning it again as what it is changes nothing, as for any record.
  auto again = filter_->Train("cheap pills buy now cheap", "spam", "s1");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->status, model::LearnStatus::kUnchanged);
  // A record inside the retention is forgotten exactly.
  ASSERT_TRUE(filter_->ForgetId("h2").has_value());
  EXPECT_EQ(filter_->Stats()->TotalDocuments(), 3u);

  const double after_forget = Score("buy cheap pills");

  // Every invariant of nbspamd check holds, counting the retired records in the base counts.
  filter_.reset();
  auto report = storage::CheckModel(dir_.Join("model"));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->ledger_records, 3u);
  EXPECT_GT(report->base_records, 0u);

  // And the model reads the same after a restart.
  Open();
  EXPECT_EQ(Score("buy cheap pills"), after_forget);
  EXPECT_EQ(filter_->ForgetId("s2").error().code, ErrorCode::kExpired);
}

// In cluster mode a retire pass goes into the training stream as steps of kRetireStepRecords
// records, cut where this daemon's ledger says (the global ledger's, then the users'), so that
// every daemon applies it in writes of a bounded size.
TEST_F(ModelExpiryTest, InClusterModeARetirePassGoesIntoTheStreamInBoundedSteps) {
  TrainAt(10, "s1", "spam", "cheap pills buy now cheap");
  TrainAt(20, "h1", "ham", "meeting notes for the project");
  TrainAt(30, "s2", "spam", "buy cheap watches now");
  TrainAt(90, "h2", "ham", "project meeting moved to friday");
  now_ = 15 * kDay;
  ASSERT_TRUE(filter_->Train("cheap offer", "spam", "u1", "alice").has_value());
  std::vector<TrainingChange> submitted;
  ASSERT_TRUE(filter_
                  ->EnableReplication([&submitted](storage::Store&, TrainingWriter&) {
                    return std::expected<std::unique_ptr<TrainingLog>, Error>(
                        std::make_unique<RecordingLog>(submitted));
                  })
                  .has_value());
  // s1, h1 and s2 (three global steps) and alice's u1 (one) are older than day 60.
  auto retired = filter_->Upkeep().RetireLedger(60 * kDay);
  ASSERT_TRUE(retired.has_value()) << retired.error().message;
  ASSERT_EQ(submitted.size(), 4u);
  for (std::size_t i = 0; i < submitted.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(submitted[i].kind, TrainingChange::Kind::kRetireStep);
    EXPECT_EQ(submitted[i].learned_before, 60 * kDay);
    EXPECT_EQ(submitted[i].retire_max_records, kRetireStepRecords);
    EXPECT_EQ(submitted[i].retire_users, i == 3);
  }
  EXPECT_EQ(submitted[0].retire_from, "");
  EXPECT_LT(submitted[0].retire_from, submitted[1].retire_from);
  EXPECT_LT(submitted[1].retire_from, submitted[2].retire_from);
  EXPECT_EQ(submitted[3].retire_from, "");
  // Nothing was retired here: the stream applies what it delivers.
  EXPECT_EQ(filter_->Upkeep().RetiredRecords(), 0u);
}

TEST_F(ModelExpiryTest, TheAgeRuleDropsRareOldTokensAndTheCapTheLeastRecentlySeen) {
  // Day d (1..10) teaches three words of its own, "dNa dNb dNc", and "shared" once a day.
  for (int day = 1; day <= 10; ++day) {
    const std::string d = "d" + std::to_string(day);
    TrainAt(day, "m" + std::to_string(day), day % 2 == 0 ? "spam" : "ham",
            d + "a " + d + "b " + d + "c shared");
  }
  TrainAt(100, "live", "spam", "d1a fresh");  // Holds d1a: it must stay.
  const std::uint64_t vocabulary = filter_->Stats()->vocabulary_size;
  ASSERT_EQ(vocabulary, 32u);  // 30 day words, "shared", "fresh".

  // The age rule alone: counted once, not seen for 95 days (days 1 to 4), no live record.
  now_ = 100 * kDay;
  ModelExpirySweep by_age(*filter_,
                          {.ledger_retention = std::chrono::days(30),
                           .token_age = std::chrono::days(95),
                           .token_max_count = 1},
                          kNever);
  auto pass = by_age.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_EQ(pass->retired, 10u);
  EXPECT_EQ(pass->dropped_by_age, 11u);  // d1b d1c, d2*, d3*, d4* (d1a is live).
  EXPECT_EQ(pass->dropped_by_cap, 0u);
  EXPECT_EQ(filter_->Stats()->vocabulary_size, vocabulary - 11);
  EXPECT_EQ(filter_->Upkeep().Expiry().dropped_tokens, 11u);

  // A cap of 15: the 6 words of days 5 and 6 are the least recently seen of what can go ("shared"
  // was seen on day 10, d1a is live); a whole day goes at a time.
  ModelExpirySweep capped(*filter_, {.ledger_retention = std::chrono::days(30), .token_cap = 15},
                          kNever);
  pass = capped.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_EQ(pass->dropped_by_cap, 6u);
  EXPECT_TRUE(pass->cap_met);
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 15u);
  EXPECT_TRUE(filter_->Upkeep().Expiry().cap_met);

  // A cap below what the live record holds cannot be met, and says so.
  ModelExpirySweep impossible(*filter_, {.ledger_retention = std::chrono::days(30), .token_cap = 1},
                              kNever);
  pass = impossible.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_FALSE(pass->cap_met);
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 2u);  // d1a and "fresh": the live record's.
  EXPECT_FALSE(filter_->Upkeep().Expiry().cap_met);
  EXPECT_EQ(filter_->Upkeep().Expiry().passes, 3u);

  // Exact throughout: forgetting the live record leaves only the base count of d1a (from the
  // retired m1), and the check holds.
  ASSERT_TRUE(filter_->ForgetId("live").has_value());
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 1u);
  EXPECT_EQ(filter_->Stats()->classes[0].tokens + filter_->Stats()->classes[1].tokens, 1u);
  filter_.reset();
  auto report = storage::CheckModel(dir_.Join("model"));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
}

TEST_F(ModelExpiryTest, TheAgeRuleWaitsUntilEnoughMessagesWereLearnedSinceATokenWasSeen) {
  // Rare and old by days from the first pass on; by messages, only words last seen before the
  // newest pass sample with at least 3 documents learned since it.
  const ExpiryPolicy policy{.ledger_retention = std::chrono::days(1),
                            .token_age = std::chrono::days(1),
                            .token_max_count = 1,
                            .token_min_messages = 3};
  ModelExpirySweep sweep(*filter_, policy, kNever);
  TrainAt(1, "m1", "spam", "alpha bravo");
  TrainAt(2, "m2", "ham", "charlie delta");
  const auto pass_at = [&](std::int64_t day) {
    now_ = day * kDay;
    auto pass = sweep.SweepOnce();
    EXPECT_TRUE(pass.has_value()) << pass.error().message;
    return pass.value_or(ExpiryPass{});
  };

  // Two documents, the first sample: the rule waits, though every word is a week old.
  ExpiryPass pass = pass_at(10);
  EXPECT_EQ(pass.retired, 2u);
  EXPECT_TRUE(pass.age_rule_waiting);
  EXPECT_EQ(pass.dropped_by_age, 0u);
  EXPECT_TRUE(filter_->Upkeep().Expiry().age_rule_waiting);
  TrainAt(11, "m3", "spam", "echo");
  pass = pass_at(13);  // 3 documents: 1 since the first sample.
  EXPECT_TRUE(pass.age_rule_waiting);
  TrainAt(14, "m4", "ham", "foxtrot");
  pass = pass_at(16);  // 4: 2 since.
  EXPECT_TRUE(pass.age_rule_waiting);
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 6u);

  // 5 documents, 3 learned since day 10's sample: the words last seen before day 10 go; echo,
  // foxtrot and golf, older than a day too, stay until 3 more are learned after them.
  TrainAt(17, "m5", "spam", "golf");
  pass = pass_at(19);
  EXPECT_FALSE(pass.age_rule_waiting);
  EXPECT_EQ(pass.dropped_by_age, 4u);
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 3u);
  EXPECT_FALSE(filter_->Upkeep().Expiry().age_rule_waiting);

  // 3 more: day 19's sample (5 documents) is the horizon now. The words of days 11 to 17 go,
  // those learned after it stay, a day old or not.
  TrainAt(20, "m6", "ham", "hotel");
  TrainAt(21, "m7", "ham", "india");
  TrainAt(22, "m8", "spam", "juliett");
  pass = pass_at(24);
  EXPECT_FALSE(pass.age_rule_waiting);
  EXPECT_EQ(pass.dropped_by_age, 3u);
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 3u);
  filter_.reset();
  auto report = storage::CheckModel(dir_.Join("model"));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
}

// After a restart the count of messages starts from the live ledger: a sweep whose first pass
// finds token_min_messages live records acts at once; with one fewer it waits.
TEST_F(ModelExpiryTest, AFirstPassCountsTheMessagesItsLiveLedgerHolds) {
  TrainAt(1, "m1", "spam", "alpha");
  TrainAt(2, "m2", "ham", "bravo");
  TrainAt(9, "m3", "spam", "charlie");
  TrainAt(9, "m4", "ham", "delta");
  const ExpiryPolicy policy{.ledger_retention = std::chrono::days(2),
                            .token_age = std::chrono::days(1),
                            .token_max_count = 1,
                            .token_min_messages = 3};
  now_ = 10 * kDay;
  {
    // Live after the retire: m3 and m4, two of the three needed.
    ModelExpirySweep sweep(*filter_, policy, kNever);
    auto pass = sweep.SweepOnce();
    ASSERT_TRUE(pass.has_value()) << pass.error().message;
    EXPECT_EQ(pass->retired, 2u);
    EXPECT_TRUE(pass->age_rule_waiting);
    EXPECT_EQ(pass->dropped_by_age, 0u);
  }
  TrainAt(9, "m5", "spam", "echo");  // Now three live records, learned on day 9.
  now_ = 10 * kDay;
  ModelExpirySweep restarted(*filter_, policy, kNever);
  auto pass = restarted.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_FALSE(pass->age_rule_waiting);
  EXPECT_EQ(pass->dropped_by_age, 2u);  // alpha and bravo, last seen before day 9.
  EXPECT_EQ(filter_->Stats()->vocabulary_size, 3u);
}

TEST_F(ModelExpiryTest, UserLayersRetireAndExpireByTheSameRulesButNotByTheCap) {
  // Tokens count once a message: "old" and "stuff" are counted twice, as is alice's "bulk".
  TrainAt(5, "g0", "spam", "old stuff");
  TrainAt(6, "g0b", "spam", "old stuff");
  TrainAt(95, "g1", "spam", "cheap pills now");
  TrainAt(95, "g2", "ham", "meeting notes today");
  const auto train_for_alice = [this](std::int64_t day, const std::string& id,
                                      const std::string& label, const std::string& text) {
    now_ = day * kDay;
    auto trained = filter_->Train(text, label, id, "alice");
    ASSERT_TRUE(trained.has_value()) << trained.error().message;
  };
  train_for_alice(10, "a1", "spam", "cheap rare watches");
  train_for_alice(20, "a2", "ham", "lunch friday");
  train_for_alice(30, "a4", "spam", "bulk");
  train_for_alice(31, "a5", "spam", "bulk");
  train_for_alice(90, "a3", "spam", "cheap fresh");  // Live: holds "cheap" and "fresh".
  const auto alice_stats = [this] { return **filter_->Users().UserStats("alice"); };
  const auto alice_score = [this](const std::string& text) {
    auto outcome = filter_->Classify(text, 0, std::nullopt, "alice");
    EXPECT_TRUE(outcome.has_value());
    return outcome ? outcome->result.log_odds.value_or(0) : 0;
  };
  const model::ModelStats before = alice_stats();
  ASSERT_EQ(before.vocabulary_size, 7u);
  ASSERT_EQ(before.classes[0].tokens, 7u);  // 3 + 1 + 1 + 2.
  const double spammy = alice_score("bulk cheap rare watches");
  const double hammy = alice_score("lunch on friday");

  // Retiring changes no score of the user's.
  now_ = 100 * kDay;
  ModelExpirySweep retire(*filter_, {.ledger_retention = std::chrono::days(60)}, kNever);
  auto pass = retire.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_EQ(pass->retired, 6u);  // g0, g0b; a1, a2, a4, a5.
  EXPECT_EQ(filter_->Upkeep().Expiry().retired_records, 2u);
  EXPECT_EQ(filter_->Upkeep().Expiry().retired_user_records, 4u);
  EXPECT_EQ(alice_stats(), before);
  EXPECT_EQ(alice_score("bulk cheap rare watches"), spammy);
  EXPECT_EQ(alice_score("lunch on friday"), hammy);

  // A retired user record answers as a retired global one: 410's error.
  auto forgotten = filter_->ForgetId("a1", "alice");
  ASSERT_FALSE(forgotten.has_value());
  EXPECT_EQ(forgotten.error().code, ErrorCode::kExpired);
  auto relabelled = filter_->Train("cheap rare watches", "ham", "a1", "alice");
  ASSERT_FALSE(relabelled.has_value());
  EXPECT_EQ(relabelled.error().code, ErrorCode::kExpired);
  auto again = filter_->Train("cheap rare watches", "spam", "a1", "alice");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->status, model::LearnStatus::kUnchanged);
  EXPECT_EQ(alice_stats(), before);

  // The age rule, in the same pass: alice's "rare", "watches", "lunch", "friday" (counted once,
  // last seen days 10 and 20) go; "bulk" is counted twice, "cheap" and "fresh" are live. The
  // global model's "old" and "stuff" are counted twice: they stay.
  ModelExpirySweep by_age(*filter_,
                          {.ledger_retention = std::chrono::days(60),
                           .token_age = std::chrono::days(50),
                           .token_max_count = 1},
                          kNever);
  pass = by_age.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_EQ(pass->retired, 0u);
  EXPECT_EQ(pass->dropped_by_age, 0u);
  EXPECT_EQ(pass->dropped_from_users, 4u);
  EXPECT_EQ(filter_->Upkeep().Expiry().dropped_user_tokens, 4u);
  EXPECT_EQ(filter_->Upkeep().Expiry().dropped_tokens, 0u);
  model::ModelStats after = alice_stats();
  EXPECT_EQ(after.vocabulary_size, 3u);       // "cheap", "bulk", "fresh".
  EXPECT_EQ(after.classes[0].tokens, 5u);     // spam: "rare" and "watches" went.
  EXPECT_EQ(after.classes[1].tokens, 0u);     // ham: "lunch" and "friday" went.
  EXPECT_EQ(after.classes[0].documents, 4u);  // Documents stay.
  EXPECT_EQ(after.classes[1].documents, 1u);

  // The cap is the global model's: over 5 tokens it drops the global "old" and "stuff" (the only
  // ones it may), and nothing of alice's, whose "bulk" it would have taken.
  ModelExpirySweep capped(*filter_, {.ledger_retention = std::chrono::days(60), .token_cap = 5},
                          kNever);
  pass = capped.SweepOnce();
  ASSERT_TRUE(pass.has_value()) << pass.error().message;
  EXPECT_EQ(pass->dropped_by_cap, 2u);
  EXPECT_EQ(pass->dropped_from_users, 0u);
  EXPECT_EQ(alice_stats(), after);

  // Exact throughout: forgetting the live record removes what it added, and the check holds.
  ASSERT_TRUE(filter_->ForgetId("a3", "alice").has_value());
  after = alice_stats();
  EXPECT_EQ(after.vocabulary_size, 2u);  // "cheap" (a1's base count) and "bulk".
  EXPECT_EQ(after.classes[0].tokens, 3u);
  filter_.reset();
  auto report = storage::CheckModel(dir_.Join("model"));
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->user_layers, 1u);
}

TEST_F(ModelExpiryTest, ItsThreadRetiresEveryIntervalAndStopsWithIt) {
  TrainAt(1, "old", "spam", "an old message");
  now_ = 400 * kDay;
  {
    ModelExpirySweep sweep(*filter_, {.ledger_retention = std::chrono::days(30)},
                           std::chrono::milliseconds(10));
    for (int i = 0; i < 500 && filter_->Upkeep().RetiredRecords() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_EQ(filter_->Upkeep().RetiredRecords(), 1u);
  EXPECT_EQ(filter_->ForgetId("old").error().code, ErrorCode::kExpired);
}

}  // namespace
}  // namespace nbspamd::core
