#include "core/spam_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/recording_log_test_util.h"
#include "model/calibration.h"
#include "storage/memory_store.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::core {
namespace {

TEST(SpamFilterTest, ContentIdIsStableHex) {
  const std::string id = SpamFilter::ContentId("hello");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id, SpamFilter::ContentId("hello"));
  EXPECT_NE(id, SpamFilter::ContentId("hello "));
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(SpamFilterTest, LabelsAndIdsAreValidated) {
  EXPECT_TRUE(SpamFilter::ValidateLabel("spam").has_value());
  EXPECT_TRUE(SpamFilter::ValidateLabel("news-letter_2.0").has_value());
  EXPECT_EQ(SpamFilter::ValidateLabel("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateLabel("a/b").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateLabel(std::string(65, 'a')).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(SpamFilter::ValidateId("<abc@example.org>").has_value());
  EXPECT_EQ(SpamFilter::ValidateId("a\nb").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateId("<ab\xC4\x30>").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateId(std::string(257, 'a')).error().code,
            ErrorCode::kInvalidArgument);
}

// A reload's new thresholds decide the next classification; bad ones, or any in feedback mode
// (where the configured ones bound the feedback's from start), change nothing.
TEST(SpamFilterTest, SetThresholdsTakesEffectAtOnceAndRefusesWhatCannotHold) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  ASSERT_TRUE(filter.Train("cheap pills now", "spam", "s").has_value());
  ASSERT_TRUE(filter.Train("lunch with the team", "ham", "h").has_value());
  const auto score = filter.Classify("cheap pills", 0)->result.score;
  ASSERT_TRUE(score.has_value());
  ASSERT_TRUE(filter.SetThresholds({.spam = *score + 1, .ham = *score - 1}).has_value());
  EXPECT_EQ(filter.Classify("cheap pills", 0)->result.verdict, model::Verdict::kUnsure);
  EXPECT_EQ(filter.Thresholds().spam, *score + 1);
  ASSERT_TRUE(filter.SetThresholds({.spam = *score - 1, .ham = *score - 2}).has_value());
  EXPECT_EQ(filter.Classify("cheap pills", 0)->result.verdict, model::Verdict::kSpam);
  EXPECT_EQ(filter.ConfiguredThresholds().ham, *score - 2);

  EXPECT_EQ(filter.SetThresholds({.spam = 0, .ham = 1}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(filter.ConfiguredThresholds().spam, *score - 1);

  SpamFilterOptions feedback;
  feedback.thresholds_from_feedback = true;
  SpamFilter from_feedback(std::make_unique<storage::MemoryStore>(), feedback);
  EXPECT_EQ(from_feedback.SetThresholds({.spam = 2, .ham = 0}).error().code,
            ErrorCode::kFailedPrecondition);
  EXPECT_EQ(from_feedback.ConfiguredThresholds().spam, feedback.spam_threshold);
}

TEST(SpamFilterTest, ATrainAfterAClassifyOfTheSameIdReportsFeedbackOnce) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt).has_value());

  // Classified as spam under a Message-ID, then trained as ham: a false positive.
  const auto verdict = filter.Classify("cheap watches pills", 0, "<m1@example.org>");
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->id, "<m1@example.org>");
  ASSERT_EQ(verdict->result.verdict, model::Verdict::kSpam);
  auto trained = filter.Train("cheap watches pills", "ham", "<m1@example.org>");
  ASSERT_TRUE(trained.has_value());
  EXPECT_EQ(trained->feedback, Feedback::kFalsePositive);
  // The verdict is used once.
  trained = filter.Train("cheap watches pills", "spam", "<m1@example.org>");
  ASSERT_TRUE(trained.has_value());
  EXPECT_EQ(trained->feedback, std::nullopt);

  // Without an id, the message's content id links the two.
  const auto by_content = filter.Classify("cheap pills here", 0);
  ASSERT_TRUE(by_content.has_value());
  EXPECT_EQ(by_content->id, SpamFilter::ContentId("cheap pills here"));
  trained = filter.Train("cheap pills here", "spam", std::nullopt);
  ASSERT_TRUE(trained.has_value());
  EXPECT_EQ(trained->feedback, by_content->result.verdict == model::Verdict::kSpam
                                   ? Feedback::kAgreed
                                   : Feedback::kFalseNegative);

  EXPECT_EQ(filter.Classify("cheap", 0, "bad\nid").error().code, ErrorCode::kInvalidArgument);
}

// The scan history changes nothing of a verdict: the same scores, the explanation asked for, and
// a scan that holds the message's bag and a longer explanation.
TEST(SpamFilterTest, RecordingAScanLeavesTheVerdictAsItWas) {
  TempDir dir;
  SpamFilter with(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  SpamFilter without(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  auto history = history::ScanHistory::Open({.path = dir.Join("history")});
  ASSERT_TRUE(history) << history.error().message;
  with.EnableHistory(std::move(*history), {.explain = 4});
  for (SpamFilter* filter : {&with, &without}) {
    ASSERT_TRUE(filter->Train("cheap watches pills here", "spam", std::nullopt));
    ASSERT_TRUE(filter->Train("lunch at noon with the team", "ham", std::nullopt));
  }
  const std::string message = "Subject: cheap lunch\r\n\r\ncheap watches at noon\r\n";
  const ClassifyRequest request{
      .message = message, .explain = 1, .front_end = "spamd", .recipients = "bob@example.org"};
  const auto recorded = with.Classify(request);
  const auto plain = without.Classify(request);
  ASSERT_TRUE(recorded && plain);
  EXPECT_EQ(recorded->result.score, plain->result.score);
  EXPECT_EQ(recorded->result.log_odds, plain->result.log_odds);
  ASSERT_EQ(recorded->result.explanations.size(), 1u);
  EXPECT_EQ(recorded->result.explanations[0].token, plain->result.explanations[0].token);
  EXPECT_TRUE(plain->scan_id.empty());
  ASSERT_FALSE(recorded->scan_id.empty());

  auto scan = with.History()->Find(recorded->scan_id);
  ASSERT_TRUE(scan) << scan.error().message;
  EXPECT_EQ(scan->summary.front_end, "spamd");
  EXPECT_EQ(scan->summary.message_key, recorded->id);
  EXPECT_EQ(scan->summary.score, recorded->result.score);
  EXPECT_EQ(scan->summary.facts.recipients, "bob@example.org");  // Kept in clear by default.
  EXPECT_EQ(scan->detail.top.size(), 4u);
  tokenizer::Tokenizer tokenizer(SpamFilterOptions{}.tokenizer);
  EXPECT_EQ(scan->detail.bag, tokenizer.Tokenize(message).entries);

  // Without a front end (tests, tools) nothing is recorded.
  EXPECT_TRUE(with.Classify(message, 0)->scan_id.empty());

  // New fact policies (a reload) hold from the next scan on.
  history::FactPolicies hashed;
  hashed.recipients = history::FactPolicy::kHash;
  with.SetHistoryFacts(hashed, 86'400'000);
  EXPECT_EQ(with.HistoryFacts(), hashed);
  EXPECT_EQ(with.History()->ClearFactsAge(), 86'400'000);
  const auto next = with.Classify(request);
  ASSERT_TRUE(next);
  EXPECT_EQ(with.History()->Find(next->scan_id)->summary.facts.recipients,
            history::HashedFact("bob@example.org", with.History()->fact_key()));
  EXPECT_EQ(with.History()->Find(recorded->scan_id)->summary.facts.recipients, "bob@example.org");
}

// A train by scan id is noted on that scan once durable: how, by whom, as what.
TEST(SpamFilterTest, TrainingAScanNotesItsLearnedState) {
  TempDir dir;
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  auto history = history::ScanHistory::Open({.path = dir.Join("history")});
  ASSERT_TRUE(history) << history.error().message;
  filter.EnableHistory(std::move(*history), {});
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt));
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt));
  const auto classified = filter.Classify({.message = "cheap lunch", .front_end = "http"});
  ASSERT_TRUE(classified);
  std::promise<bool> trained;
  filter.TrainScanAsync(
      {.scan_id = classified->scan_id, .label = "ham", .source = "alice"},
      [&](std::expected<TrainOutcome, Error> outcome) { trained.set_value(outcome.has_value()); });
  ASSERT_TRUE(trained.get_future().get());
  auto scan = filter.History()->Find(classified->scan_id);
  ASSERT_TRUE(scan && scan->summary.learned);
  EXPECT_EQ(scan->summary.learned->label, "ham");
  EXPECT_EQ(scan->summary.learned->how, "scan_id");
  EXPECT_EQ(scan->summary.learned->by, "alice");
  EXPECT_EQ(scan->summary.learned->changes, 1u);
  // A failed train notes nothing.
  std::promise<bool> failed;
  filter.TrainScanAsync(
      {.scan_id = classified->scan_id, .label = "no good!", .source = "bob"},
      [&](std::expected<TrainOutcome, Error> outcome) { failed.set_value(outcome.has_value()); });
  EXPECT_FALSE(failed.get_future().get());
  EXPECT_EQ(filter.History()->Find(classified->scan_id)->summary.learned->by, "alice");
}

TEST(SpamFilterTest, ForgetRestoresTheVerdictExactly) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  ASSERT_TRUE(filter.Train("cheap watches here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon", "ham", std::nullopt).has_value());
  const auto before = filter.Classify("cheap lunch", 0);
  ASSERT_TRUE(before.has_value());
  ASSERT_TRUE(filter.Train("cheap cheap pills", "spam", "extra").has_value());
  EXPECT_NE(*filter.Classify("cheap lunch", 0)->result.log_odds, *before->result.log_odds);
  ASSERT_TRUE(filter.ForgetId("extra").has_value());
  const auto after = filter.Classify("cheap lunch", 0);
  EXPECT_EQ(*after->result.log_odds, *before->result.log_odds);
  EXPECT_EQ(after->result.classes[0].probability, before->result.classes[0].probability);
}

// The same verdict to the bit: score, log-odds and every class's probability.
void ExpectSameResult(const ClassifyOutcome& a, const ClassifyOutcome& b) {
  EXPECT_EQ(a.result.score, b.result.score);
  EXPECT_EQ(a.result.log_odds, b.result.log_odds);
  ASSERT_EQ(a.result.classes.size(), b.result.classes.size());
  for (std::size_t i = 0; i < a.result.classes.size(); ++i) {
    EXPECT_EQ(a.result.classes[i].probability, b.result.classes[i].probability);
  }
}

TEST(SpamFilterTest, AUserTrainsOnlyTheirOwnLayerAndForgetAndDeleteUndoItExactly) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt).has_value());
  const std::string_view message = "team lunch watches";
  const auto global = filter.Classify(message, 0);
  ASSERT_TRUE(global.has_value());
  // A user with no layer scores exactly as the global model.
  const auto fresh = filter.Classify(message, 0, std::nullopt, "alice");
  ASSERT_TRUE(fresh.has_value());
  ExpectSameResult(*fresh, *global);
  EXPECT_EQ(filter.Users().UserStats("alice")->has_value(), false);

  const auto trained = filter.Train("team lunch watches offer", "spam", "u1", "alice");
  ASSERT_TRUE(trained.has_value());
  EXPECT_EQ(trained->status, model::LearnStatus::kLearned);
  const auto alice = filter.Classify(message, 0, std::nullopt, "alice");
  ASSERT_TRUE(alice.has_value());
  EXPECT_GT(*alice->result.score, *global->result.score);
  ExpectSameResult(*filter.Classify(message, 0, std::nullopt, "bob"), *global);
  ExpectSameResult(*filter.Classify(message, 0), *global);
  const auto stats = filter.Users().UserStats("alice");
  ASSERT_TRUE(stats.has_value() && stats->has_value());
  EXPECT_EQ((*stats)->classes[0].label, "spam");
  EXPECT_EQ((*stats)->classes[0].documents, 1u);
  EXPECT_EQ((*stats)->classes[1].documents, 0u);
  EXPECT_EQ((*stats)->vocabulary_size, 4u);
  EXPECT_EQ(filter.Stats()->classes[0].documents, 1u);  // The global model did not learn it.

  // The global ledger does not hold u1; alice's does.
  EXPECT_EQ(filter.ForgetId("u1").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(filter.ForgetId("u1", "bob").error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(filter.ForgetId("u1", "alice").has_value());
  ExpectSameResult(*filter.Classify(message, 0, std::nullopt, "alice"), *global);

  ASSERT_TRUE(filter.Train("team lunch watches offer", "spam", "u1", "alice").has_value());
  ASSERT_TRUE(filter.Users().DeleteUser("alice").has_value());
  EXPECT_FALSE(filter.Users().UserStats("alice")->has_value());
  ExpectSameResult(*filter.Classify(message, 0, std::nullopt, "alice"), *global);
  EXPECT_TRUE(filter.Users().DeleteUser("nobody").has_value());
}

TEST(SpamFilterTest, TrainGlobalFromUsersTrainsBothAndForgetUndoesBoth) {
  SpamFilterOptions options;
  options.train_global_from_users = true;
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), options);
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt).has_value());
  const std::string_view message = "team lunch watches";
  const auto global = filter.Classify(message, 0);
  ASSERT_TRUE(global.has_value());

  ASSERT_TRUE(filter.Train("team lunch watches offer", "spam", "u1", "alice").has_value());
  EXPECT_EQ(filter.Stats()->classes[0].documents, 2u);
  EXPECT_GT(*filter.Classify(message, 0)->result.score, *global->result.score);
  EXPECT_EQ((*filter.Users().UserStats("alice"))->classes[0].documents, 1u);

  ASSERT_TRUE(filter.ForgetId("u1", "alice").has_value());
  EXPECT_EQ(filter.Stats()->classes[0].documents, 1u);
  ExpectSameResult(*filter.Classify(message, 0), *global);
  ExpectSameResult(*filter.Classify(message, 0, std::nullopt, "alice"), *global);
}

TEST(SpamFilterTest, BadUserIdsAreRefused) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt).has_value());
  const std::string bad[] = {"", std::string(257, 'u'), std::string("a\0b", 3)};
  for (const std::string& user : bad) {
    EXPECT_EQ(filter.Classify("cheap", 0, std::nullopt, user).error().code,
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(filter.Train("cheap", "spam", std::nullopt, user).error().code,
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(filter.ForgetId("x", user).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(filter.Users().DeleteUser(user).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(filter.Users().UserStats(user).error().code, ErrorCode::kInvalidArgument);
  }
}

// train_global_from_users with sources: a user's train, forget or rollback changes the global
// model only when it comes through a listed source.
TEST(SpamFilterTest, OnlyListedSourcesTrainTheGlobalModelFromUsers) {
  SpamFilterOptions options;
  options.train_global_from_users = true;
  options.train_global_sources = {"feedback"};
  EXPECT_TRUE(options.TrainsGlobal("feedback"));
  EXPECT_FALSE(options.TrainsGlobal("mx1"));
  EXPECT_FALSE(options.TrainsGlobal(""));
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), options);
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt).has_value());
  const auto train = [&filter](std::string_view id, std::string_view source) {
    std::promise<std::expected<TrainOutcome, Error>> promise;
    filter.TrainAsync({.message = "cheap lunch offer",
                       .label = "spam",
                       .id = id,
                       .source = source,
                       .user = "alice"},
                      [&promise](auto outcome) { promise.set_value(std::move(outcome)); });
    return promise.get_future().get();
  };
  ASSERT_TRUE(train("m1", "mx1").has_value());
  EXPECT_EQ(filter.Stats()->classes[0].documents, 1u);  // Alice's layer only.
  ASSERT_TRUE(train("m2", "feedback").has_value());
  EXPECT_EQ(filter.Stats()->classes[0].documents, 2u);  // And the global model.
  EXPECT_EQ((*filter.Users().UserStats("alice"))->classes[0].documents, 2u);

  std::promise<std::expected<ForgetOutcome, Error>> forgotten;
  filter.ForgetAsync({.id = "m2", .source = "feedback", .user = "alice"},
                     [&forgotten](auto outcome) { forgotten.set_value(std::move(outcome)); });
  ASSERT_TRUE(forgotten.get_future().get().has_value());
  EXPECT_EQ(filter.Stats()->classes[0].documents, 1u);
  EXPECT_EQ((*filter.Users().UserStats("alice"))->classes[0].documents, 1u);
}

// In cluster mode a train, forget or delete with a user goes into the training stream with the
// user and this daemon's train_global_from_users, and is applied here only as the stream
// delivers it (never locally first, so no daemon's layers differ from the others').
TEST(SpamFilterTest, ClusterModeSubmitsUserChangesToTheTrainingLog) {
  SpamFilterOptions options;
  options.train_global_from_users = true;
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), options);
  ASSERT_TRUE(filter.Train("cheap watches pills here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon with the team", "ham", std::nullopt).has_value());
  std::vector<TrainingChange> submitted;
  ASSERT_TRUE(filter
                  .EnableReplication([&submitted](storage::Store&, TrainingWriter&) {
                    return std::expected<std::unique_ptr<TrainingLog>, Error>(
                        std::make_unique<RecordingLog>(submitted));
                  })
                  .has_value());
  const auto trained = filter.Train("cheap", "spam", "u1", "alice");
  ASSERT_TRUE(trained.has_value()) << trained.error().message;
  EXPECT_TRUE(trained->queued);
  ASSERT_TRUE(filter.ForgetId("u1", "alice").has_value());
  ASSERT_TRUE(filter.Users().DeleteUser("alice").has_value());
  ASSERT_TRUE(filter.Train("cheap", "spam", "g1").has_value());
  ASSERT_EQ(submitted.size(), 4u);

  EXPECT_EQ(submitted[0].kind, TrainingChange::Kind::kLearn);
  EXPECT_EQ(submitted[0].id, "u1");
  EXPECT_EQ(submitted[0].label, "spam");
  EXPECT_EQ(submitted[0].user, "alice");
  EXPECT_TRUE(submitted[0].train_global);
  EXPECT_FALSE(submitted[0].tokens.empty());
  EXPECT_EQ(submitted[1].kind, TrainingChange::Kind::kForget);
  EXPECT_EQ(submitted[1].id, "u1");
  EXPECT_EQ(submitted[1].user, "alice");
  EXPECT_TRUE(submitted[1].train_global);
  EXPECT_EQ(submitted[2].kind, TrainingChange::Kind::kDeleteUser);
  EXPECT_EQ(submitted[2].user, "alice");
  EXPECT_EQ(submitted[2].id, "");
  EXPECT_EQ(submitted[3].user, "");  // Global training carries no user.
  // Nothing was applied here: the log applies what it delivers.
  EXPECT_FALSE(filter.Users().UserStats("alice")->has_value());
  EXPECT_TRUE(filter.Classify("cheap", 0, std::nullopt, "alice").has_value());
}

TEST(SpamFilterTest, SpamConfidenceComesWithEnoughFeedbackAndFollowsTheScore) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  std::mt19937 random(3);
  const std::vector<std::string> spammy = {"cheap", "pills", "winner", "prize", "casino", "free"};
  const std::vector<std::string> hammy = {"lunch", "meeting", "report", "agenda", "team", "notes"};
  const auto text = [&](const std::vector<std::string>& words) {
    std::string t;
    for (int i = 0; i < 4; ++i) t += words[random() % words.size()] + " ";
    return t + std::to_string(random());
  };
  ASSERT_TRUE(filter.Train(text(spammy), "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train(text(hammy), "ham", std::nullopt).has_value());
  EXPECT_FALSE(filter.Classify("cheap pills", 0)->spam_confidence.has_value());
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(filter.Train(text(spammy), "spam", std::nullopt).has_value());
    ASSERT_TRUE(filter.Train(text(hammy), "ham", std::nullopt).has_value());
  }
  EXPECT_TRUE(filter.Calibration()->ready());
  const auto spam = filter.Classify("cheap pills winner prize", 0);
  const auto ham = filter.Classify("lunch meeting team agenda", 0);
  ASSERT_TRUE(spam->spam_confidence.has_value() && ham->spam_confidence.has_value());
  EXPECT_GT(*spam->spam_confidence, 0.8);
  EXPECT_LT(*ham->spam_confidence, 0.2);
  EXPECT_EQ(*spam->spam_confidence, *filter.Calibration()->SpamConfidence(*spam->result.score));
}

// spam_confidence is fitted on held-out scores and applied to /classify's score: both must be the
// same score, score_min_weight included (with the default 1, a held-out score computed over every
// weight is another, flatter scale, and the confidence comes out too low in the middle).
TEST(SpamFilterTest, AHeldOutScoreIsTheScoreClassifyGaveJustBefore) {
  auto store = std::make_unique<storage::MemoryStore>();
  const storage::Store& ledger = *store;
  SpamFilter filter(std::move(store), SpamFilterOptions{});
  ASSERT_EQ(SpamFilterOptions{}.score_min_weight, 1.0);
  std::mt19937 random(11);
  const std::vector<std::string> spammy = {"cheap", "pills", "winner", "prize", "casino", "free"};
  const std::vector<std::string> hammy = {"lunch", "meeting", "report", "agenda", "team", "notes"};
  const std::vector<std::string> both = {"today", "please", "your", "offer", "next", "week"};
  const auto text = [&](const std::vector<std::string>& words) {
    std::string t;
    for (int i = 0; i < 3; ++i) t += words[random() % words.size()] + " ";
    for (int i = 0; i < 3; ++i) t += both[random() % both.size()] + " ";
    return t;
  };
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(filter.Train(text(spammy), "spam", "s" + std::to_string(i)).has_value());
    ASSERT_TRUE(filter.Train(text(hammy), "ham", "h" + std::to_string(i)).has_value());
  }
  const std::string probe = "cheap pills lunch today please offer next";
  const auto before = filter.Classify(probe, 1000);
  ASSERT_TRUE(before.has_value() && before->result.score.has_value());
  std::size_t weak = 0;  // The probe has tokens on both sides of score_min_weight.
  for (const auto& token : before->result.explanations) weak += std::fabs(token.weight) <= 1.0;
  ASSERT_GT(weak, 0u);
  ASSERT_LT(weak, before->result.explanations.size());
  ASSERT_TRUE(filter.Train(probe, "spam", "probe").has_value());
  const auto learned = ledger.FindLearned("probe");
  ASSERT_TRUE(learned.has_value() && learned->has_value() && (*learned)->held_out.has_value());
  EXPECT_EQ((*learned)->held_out->scale, model::kScoreScale);
  EXPECT_DOUBLE_EQ((*learned)->held_out->score, *before->result.score);
}

TEST(SpamFilterTest, TheLedgerRecordsWhoTrainedAMessageAndTheClocksTime) {
  auto store = std::make_unique<storage::MemoryStore>();
  const storage::Store& ledger = *store;
  SpamFilterOptions options;
  std::int64_t now = 1'700'000'000;
  options.clock = [&now] { return now; };
  SpamFilter filter(std::move(store), options);
  ASSERT_TRUE(filter.Train("cheap watches here", "spam", "first").has_value());
  now += 90;
  std::promise<std::expected<TrainOutcome, Error>> trained;
  filter.TrainAsync(
      {.message = "lunch at noon", .label = "ham", .id = "second", .source = "mx-feedback"},
      [&trained](std::expected<TrainOutcome, Error> outcome) {
        trained.set_value(std::move(outcome));
      });
  ASSERT_TRUE(trained.get_future().get().has_value());
  EXPECT_EQ((**ledger.FindLearned("first")).origin, (model::LearnOrigin{"", 1'700'000'000}));
  EXPECT_EQ((**ledger.FindLearned("second")).origin,
            (model::LearnOrigin{"mx-feedback", 1'700'000'090}));
}

// One training request of the concurrent test, and what the daemon answered.
struct Event {
  std::string id;
  std::string label;  // "" forgets the id.
  std::string text;
  std::string answer;  // "learned", "relearned", "unchanged", "forgotten" or an error code.
};

std::string Answer(const std::expected<TrainOutcome, Error>& outcome) {
  if (!outcome) return std::string(ErrorCodeName(outcome.error().code));
  return std::string(model::LearnStatusName(outcome->status));
}
std::string Answer(const std::expected<std::string, Error>& outcome) {
  if (!outcome) return std::string(ErrorCodeName(outcome.error().code));
  return "forgotten";
}
std::string Answer(const std::expected<ForgetOutcome, Error>& outcome) {
  if (!outcome) return std::string(ErrorCodeName(outcome.error().code));
  return "forgotten";
}

std::string RandomText(std::mt19937& random) {
  static const char* const kWords[] = {"cheap", "pills", "lunch",  "meeting", "free",
                                       "offer", "noon",  "review", "account", "verify",
                                       "win",   "prize", "report", "friday",  "invoice"};
  std::string text;
  const int length = 1 + static_cast<int>(random() % 8);
  for (int i = 0; i < length; ++i) {
    if (!text.empty()) text += ' ';
    text += kWords[random() % std::size(kWords)];
  }
  return text;
}

// One fixed wall clock for both filters: the ledger stamps each learn with its time, and the two
// runs must not differ by a second boundary crossed between them.
SpamFilterOptions FixedClockOptions() {
  SpamFilterOptions options;
  options.clock = [] { return std::int64_t{1'795'440'960}; };
  return options;
}

TEST(SpamFilterTest, ConcurrentTrainingEqualsTrainingOneByOneInCommitOrder) {
  auto concurrent_store = std::make_unique<storage::MemoryStore>();
  const storage::Store& concurrent_ledger = *concurrent_store;
  SpamFilter concurrent(std::move(concurrent_store), FixedClockOptions());

  // Completions run in commit order on the writer thread (errors of bad requests on the caller's
  // thread, but every request here is valid), so this list is the commit order.
  std::mutex mutex;
  std::vector<Event> committed;
  constexpr int kThreads = 8;
  constexpr int kRequestsPerThread = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(1000 + t);
      for (int i = 0; i < kRequestsPerThread; ++i) {
        // 40 ids shared by all threads: learns, relearns and forgets of one id race each other.
        Event event{"id" + std::to_string(random() % 40), "", RandomText(random), ""};
        const unsigned kind = random() % 20;
        auto done = std::make_shared<std::promise<void>>();
        if (kind < 3) {
          concurrent.ForgetAsync({.id = event.id},
                                 [&, event, done](std::expected<ForgetOutcome, Error> r) mutable {
                                   event.answer = Answer(r);
                                   std::lock_guard lock(mutex);
                                   committed.push_back(std::move(event));
                                   done->set_value();
                                 });
        } else {
          event.label = kind < 10 ? "spam" : kind < 19 ? "ham" : "phishing";
          concurrent.TrainAsync({.message = event.text, .label = event.label, .id = event.id},
                                [&, event, done](std::expected<TrainOutcome, Error> r) mutable {
                                  event.answer = Answer(r);
                                  std::lock_guard lock(mutex);
                                  committed.push_back(std::move(event));
                                  done->set_value();
                                });
        }
        // Every few requests a thread waits for its own, so groups of all sizes form.
        if (i % 5 == 0) done->get_future().wait();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  concurrent.StopTraining();
  ASSERT_EQ(committed.size(), std::size_t{kThreads * kRequestsPerThread});
  RecordProperty("groups", std::to_string(concurrent.TrainingGroups()));

  auto sequential_store = std::make_unique<storage::MemoryStore>();
  const storage::Store& sequential_ledger = *sequential_store;
  SpamFilter sequential(std::move(sequential_store), FixedClockOptions());
  for (const Event& event : committed) {
    const std::string answer = event.label.empty()
                                   ? Answer(sequential.ForgetId(event.id))
                                   : Answer(sequential.Train(event.text, event.label, event.id));
    ASSERT_EQ(answer, event.answer) << event.id << " " << event.label << " " << event.text;
  }

  EXPECT_EQ(*concurrent.Stats(), *sequential.Stats());
  for (int i = 0; i < 40; ++i) {
    const std::string id = "id" + std::to_string(i);
    EXPECT_EQ(*concurrent_ledger.FindLearned(id), *sequential_ledger.FindLearned(id)) << id;
  }
  std::mt19937 random(7);
  for (int i = 0; i < 50; ++i) {
    const std::string text = RandomText(random);
    const auto a = concurrent.Classify(text, 0);
    const auto b = sequential.Classify(text, 0);
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_EQ(a->result.label(), b->result.label());
    EXPECT_EQ(*a->result.log_odds, *b->result.log_odds) << text;
    EXPECT_EQ(a->result.classes[0].probability, b->result.classes[0].probability) << text;
  }
}

}  // namespace
}  // namespace nbspamd::core
