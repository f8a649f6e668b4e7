#include "storage/model_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/encoding.h"
#include "storage/model_transfer.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/token_bags.h"

namespace nbspamd::storage {
namespace {

using test_support::BagOfWords;

using ::testing::HasSubstr;

void LearnText(Store& store, const std::string& id, const std::string& label,
               const std::string& text) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats());
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

constexpr char kCheckWords[] = "send us your password review account";

// Opens the closed model in `path` behind the store's back and calls `change(db, family)` for
// each of its column families by name.
void ChangeRaw(const std::string& path,
               const std::function<void(rocksdb::DB&, const std::string&,
                                        rocksdb::ColumnFamilyHandle*)>& change) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) descriptors.emplace_back(name, rocksdb::Options());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Options options;
  options.max_file_opening_threads = kFileOpeningThreads;  // As the store opens it.
  ASSERT_TRUE(rocksdb::DB::Open(options, path, descriptors, &handles, &db).ok());
  for (std::size_t i = 0; i < names.size(); ++i) change(*db, names[i], handles[i]);
  for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
  delete db;
}

// Writes `key` → `value` into `family` of the closed model in `path`.
void WriteRaw(const std::string& path, const char* family, const std::string& key,
              const std::string& value) {
  ChangeRaw(path, [&](rocksdb::DB& db, const std::string& name, rocksdb::ColumnFamilyHandle* h) {
    if (name == family) {
      ASSERT_TRUE(db.Put({}, h, key, value).ok());
    }
  });
}

class ModelCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    LearnText(**store, "d1", "spam", "send us your password");
    LearnText(**store, "d2", "spam", "review us");
    LearnText(**store, "d5", "ham", "password review");
    LearnText(**store, "d6", "ham", "send us your review");
    LearnText(**store, "d6", "spam", "send us your review");  // Relearned: counts moved.
    stats_ = *(*store)->Stats();
    snapshot_ = (*store)->Read(BagOfWords(kCheckWords).entries);
  }

  // The model reopened gives exactly the counts and stats of SetUp.
  void ExpectOriginalModel() {
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    EXPECT_EQ(*(*store)->Stats(), stats_);
    const model::Snapshot snapshot = (*store)->Read(BagOfWords(kCheckWords).entries);
    EXPECT_EQ(snapshot.counts, snapshot_.counts);
  }

  TempDir dir_;
  std::string path_ = dir_.Join("model");
  model::ModelStats stats_;
  model::Snapshot snapshot_;
};

TEST_F(ModelCheckTest, AHealthyModelPasses) {
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->ledger_records, 4u);
  EXPECT_EQ(report->token_records, 5u);  // send us your password review
  EXPECT_EQ(report->stats, stats_);
}

TEST_F(ModelCheckTest, ATokenCountTheLedgerDoesNotExplainIsFoundAndRepaired) {
  const TokenHash hash = std::hash<std::string>{}("review");
  WriteRaw(path_, kTokensFamily, EncodeTokenKey(hash), EncodeTokenCounts({7, 1}));
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_FALSE(report->ok());
  EXPECT_THAT(report->problems.front(),
              HasSubstr("counts differ from what the ledger and the base counts added"));
  // The daemon itself refuses it: the class totals no longer match.
  auto refused = RocksdbStore::Open(path_);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kDataLoss);

  auto repaired = RepairModel(path_);
  ASSERT_TRUE(repaired.has_value()) << repaired.error().message;
  EXPECT_TRUE(repaired->ok());
  ExpectOriginalModel();
}

TEST_F(ModelCheckTest, StrayTokensAndWrongDocumentCountsAreRepaired) {
  // A token no ledger record added, with the stats made to agree with it, and a wrong N_spam:
  // the daemon's own open check passes, only the ledger shows the damage.
  model::ModelStats bad = stats_;
  bad.classes[0].documents += 3;
  bad.classes[1].tokens += 2;
  ++bad.vocabulary_size;
  WriteRaw(path_, kTokensFamily, EncodeTokenKey(12345), EncodeTokenCounts({0, 2}));
  WriteRaw(path_, "default", kModelStatsKey, EncodeModelStats(bad));
  ASSERT_TRUE(RocksdbStore::Open(path_).has_value());
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->problems.size(), 2u);
  EXPECT_THAT(report->problems[0], HasSubstr("counts differ"));
  EXPECT_THAT(report->problems[1],
              HasSubstr("has 6 documents but the ledger and the base documents hold 3"));

  ASSERT_TRUE(RepairModel(path_).has_value());
  ExpectOriginalModel();
}

// Counts from elsewhere (storage/model_transfer.h): a global layer with a token of the model and
// a new one, and a user layer, appended as base counts.
void AppendBase(const std::string& path) {
  auto import = ModelImport::Begin(path, ImportMode::kAppend);
  ASSERT_TRUE(import.has_value()) << import.error().message;
  model::ModelStats global;
  global.classes = {{"spam", 2, 5}, {"ham", 1, 1}};
  global.vocabulary_size = 2;
  ASSERT_TRUE((*import)->BeginLayer("", global).has_value());
  const std::vector<std::pair<TokenHash, std::vector<std::uint64_t>>> tokens = {
      {std::hash<std::string>{}("review"), {4}}, {std::hash<std::string>{}("zzz-new"), {1, 1}}};
  auto sorted = tokens;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [hash, counts] : sorted) ASSERT_TRUE((*import)->Token(hash, counts).has_value());
  ASSERT_TRUE((*import)->EndLayer().has_value());
  model::ModelStats user = global;
  user.classes = {{"spam", 0, 0}, {"ham", 1, 2}};
  user.vocabulary_size = 1;
  ASSERT_TRUE((*import)->BeginLayer("alice", user).has_value());
  const std::vector<std::uint64_t> ham = {0, 2};
  ASSERT_TRUE((*import)->Token(std::hash<std::string>{}("lunch"), ham).has_value());
  ASSERT_TRUE((*import)->EndLayer().has_value());
  auto committed = (*import)->Commit();
  ASSERT_TRUE(committed.has_value()) << committed.error().message;
}

TEST_F(ModelCheckTest, BaseCountsBalanceTheInvariantsAndARepairKeepsThem) {
  AppendBase(path_);
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << ::testing::PrintToString(report->problems);
  EXPECT_EQ(report->base_records, 2u);
  EXPECT_EQ(report->stats.classes[0].documents, stats_.classes[0].documents + 2);
  model::ModelStats merged;
  model::Snapshot merged_snapshot;
  {
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    merged = *(*store)->Stats();
    merged_snapshot = (*store)->Read(BagOfWords(kCheckWords).entries);
  }
  // A damaged token record and document count: found, and repaired from ledger and base.
  const TokenHash hash = std::hash<std::string>{}("review");
  WriteRaw(path_, kTokensFamily, EncodeTokenKey(hash), EncodeTokenCounts({1}));
  model::ModelStats bad = merged;
  bad.classes[1].documents += 5;
  WriteRaw(path_, "default", kModelStatsKey, EncodeModelStats(bad));
  report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  EXPECT_FALSE(report->ok());
  ASSERT_TRUE(RepairModel(path_).has_value());
  auto store = RocksdbStore::Open(path_);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ(*(*store)->Stats(), merged);
  EXPECT_EQ((*store)->Read(BagOfWords(kCheckWords).entries).counts, merged_snapshot.counts);
  // Forgetting every learned message leaves the base counts and nothing else.
  for (const char* id : {"d1", "d2", "d5", "d6"}) {
    auto learned = (*store)->FindLearned(id);
    ASSERT_TRUE(learned.has_value() && learned->has_value());
    ASSERT_TRUE((*store)->Apply(model::PlanForget(id, **learned, *(*store)->Stats())).has_value());
  }
  const auto stats = (*store)->Stats();
  EXPECT_EQ(stats->classes[0].documents, 2u);
  EXPECT_EQ(stats->classes[0].tokens, 5u);
  EXPECT_EQ(stats->vocabulary_size, 2u);
  store->reset();
  auto after = CheckModel(path_);
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->ok()) << ::testing::PrintToString(after->problems);
}

TEST_F(ModelCheckTest, ACorruptBaseRecordIsReportedAndDropped) {
  AppendBase(path_);
  WriteRaw(path_, kBaseFamily, EncodeTokenKey(99), "\xff\xff");
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  ASSERT_FALSE(report->ok());
  EXPECT_THAT(report->problems.front(), HasSubstr("base count record cannot be decoded"));
  auto repaired = RepairModel(path_);
  ASSERT_TRUE(repaired.has_value()) << repaired.error().message;
  EXPECT_TRUE(repaired->ok()) << ::testing::PrintToString(repaired->problems);
  EXPECT_EQ(repaired->base_records, 2u);
}

TEST_F(ModelCheckTest, ACorruptLedgerRecordIsReportedAndDropped) {
  WriteRaw(path_, kLedgerFamily, "broken", "\xff\xff");
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  ASSERT_FALSE(report->ok());
  EXPECT_THAT(report->problems.front(), HasSubstr("ledger record 'broken' cannot be decoded"));
  auto repaired = RepairModel(path_);
  ASSERT_TRUE(repaired.has_value());
  EXPECT_TRUE(repaired->ok());
  EXPECT_EQ(repaired->ledger_records, 4u);
  ExpectOriginalModel();
}

TEST_F(ModelCheckTest, AStraySourceIndexEntryIsFoundAndRemoved) {
  WriteRaw(path_, kSourcesFamily, EncodeSourceKey("ghost", {"mx1", 5}), "");
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  ASSERT_FALSE(report->ok());
  EXPECT_THAT(report->problems.front(), HasSubstr("point to no ledger record"));
  auto repaired = RepairModel(path_);
  ASSERT_TRUE(repaired.has_value());
  EXPECT_TRUE(repaired->ok());
}

TEST_F(ModelCheckTest, ASchemaOneFolderIsUpgradedAtOpen) {
  // A schema 1 folder: no source index, version 1.
  ChangeRaw(path_, [](rocksdb::DB& db, const std::string& name, rocksdb::ColumnFamilyHandle* h) {
    if (name == kSourcesFamily) {
      ASSERT_TRUE(db.DropColumnFamily(h).ok());
    }
    if (name == "default") {
      ASSERT_TRUE(db.Put({}, h, kSchemaVersionKey, "1").ok());
    }
  });
  ExpectOriginalModel();
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok());
  auto store = RocksdbStore::Open(path_);
  ASSERT_TRUE(store.has_value());
  auto listed = (*store)->ListLearned("", 0, 1, 100);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->size(), 4u);
}

TEST_F(ModelCheckTest, ACalibrationRecordTheLedgerDoesNotExplainIsFoundAndRepaired) {
  model::FeedbackHistogram expected;
  {
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    for (const auto& [id, label, score] : {std::tuple{"f1", "spam", 0.25}, {"f2", "ham", -0.75}}) {
      const model::LearnPlan plan =
          model::PlanLearn(id, label, BagOfWords(id), std::nullopt, *(*store)->Stats(), {},
                           model::HeldOutScore{model::kScoreScale, score});
      ASSERT_TRUE((*store)->Apply(plan.delta).has_value());
      expected.Add({model::CalibrationBin(score), std::string(label) == "spam"});
    }
    ASSERT_EQ(*(*store)->Feedback(), expected);
  }
  ASSERT_TRUE(CheckModel(path_)->ok());

  model::FeedbackHistogram wrong = expected;
  wrong.spam[3] = 7;
  WriteRaw(path_, "default", kCalibrationKey, EncodeFeedbackHistogram(wrong));
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  ASSERT_FALSE(report->ok());
  EXPECT_THAT(report->problems.front(),
              HasSubstr("the calibration record does not count the ledger's held-out scores (8 "
                        "spam, 1 ham where the ledger has 1 and 1)"));
  auto repaired = RepairModel(path_);
  ASSERT_TRUE(repaired.has_value()) << repaired.error().message;
  EXPECT_TRUE(repaired->ok());
  {
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    EXPECT_EQ(*(*store)->Feedback(), expected);
  }

  // Missing is a problem; another layout is not (the daemon rebuilds it when it opens).
  ChangeRaw(path_, [](rocksdb::DB& db, const std::string& name, rocksdb::ColumnFamilyHandle* h) {
    if (name == "default") {
      ASSERT_TRUE(db.Delete({}, h, kCalibrationKey).ok());
    }
  });
  EXPECT_THAT(CheckModel(path_)->problems,
              ::testing::Contains("the calibration record is missing"));
  model::FeedbackHistogram other;
  other.layout.score_scale = model::kScoreScale + 1;
  WriteRaw(path_, "default", kCalibrationKey, EncodeFeedbackHistogram(other));
  EXPECT_TRUE(CheckModel(path_)->ok());
}

TEST_F(ModelCheckTest, RepairIsRefusedWhileTheModelIsOpen) {
  auto store = RocksdbStore::Open(path_);
  ASSERT_TRUE(store.has_value());
  auto repaired = RepairModel(path_);
  ASSERT_FALSE(repaired.has_value());
  EXPECT_EQ(repaired.error().code, ErrorCode::kInternal);
}

TEST_F(ModelCheckTest, NoModelIsNotFound) {
  auto report = CheckModel(dir_.Join("nothing"));
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kNotFound);
}

TEST_F(ModelCheckTest, ACheckpointTakenWhileTrainingOpensAsTheModelOfThatMoment) {
  auto store = RocksdbStore::Open(path_);
  ASSERT_TRUE(store.has_value());
  const std::string backup = dir_.Join("backups/one");
  ASSERT_TRUE((*store)->Checkpoint(backup).has_value());
  LearnText(**store, "d7", "spam", "send your password");
  auto again = (*store)->Checkpoint(backup);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  store->reset();

  auto report = CheckModel(backup);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok());
  path_ = backup;
  ExpectOriginalModel();
}

// Learns `text` as `label` in `user`'s layer (and in the global model when `global`).
void UserLearnText(Store& store, const std::string& user, const std::string& id,
                   const std::string& label, const std::string& text, bool global = false) {
  const auto stats = store.Stats();
  model::LearnPlan plan;
  if (global) plan = model::PlanLearn(id, label, BagOfWords(text), *store.FindLearned(id), *stats);
  (void)model::AddUserLearn(plan.delta, user, id, label, BagOfWords(text),
                            *store.FindUserLearned(user, id), *stats, {"feedback", 5});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

void ForgetUserMessage(Store& store, const std::string& user, const std::string& id) {
  model::Delta delta;
  model::AddUserForget(delta, user, id, **store.FindUserLearned(user, id), *store.Stats());
  ASSERT_TRUE(store.Apply(delta).has_value());
}

class UserLayerCheckTest : public ModelCheckTest {
 protected:
  void SetUp() override {
    ModelCheckTest::SetUp();
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    UserLearnText(**store, "alice", "u1", "ham", "send us your password");
    UserLearnText(**store, "alice", "u2", "spam", "cheap pills", /*global=*/true);
    UserLearnText(**store, "alice", "u1", "spam", "send us your password");
    UserLearnText(**store, "bob", "u1", "ham", "review");
    UserLearnText(**store, "carol", "u3", "ham", "lunch");
    ForgetUserMessage(**store, "carol", "u3");
    ASSERT_TRUE((*store)->DeleteUser("bob").has_value());
    UserLearnText(**store, "dave", "u4", "phishing", "verify your account");
  }

  std::vector<std::string> Problems() {
    auto report = CheckModel(path_);
    EXPECT_TRUE(report.has_value()) << report.error().message;
    return report ? report->problems : std::vector<std::string>{};
  }
};

TEST_F(UserLayerCheckTest, HealthyUserLayersPass) {
  auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->ok()) << report->problems.front();
  EXPECT_EQ(report->user_layers, 2u);  // alice and dave; bob deleted, carol forgot everything.
  // alice: stats, 6 tokens, 2 ledger records and 2 source entries; dave: 1 + 3 + 1 + 1.
  EXPECT_EQ(report->user_records, 11u + 6u);
}

TEST_F(UserLayerCheckTest, AUserTokenCountTheUsersLedgerDoesNotExplainIsFound) {
  WriteRaw(path_, kUsersFamily, UserTokenKey("alice", std::hash<std::string>{}("cheap")),
           EncodeTokenCounts({2}));
  const auto problems = Problems();
  ASSERT_FALSE(problems.empty());
  EXPECT_THAT(problems.front(), HasSubstr("user 'alice' token"));
  EXPECT_THAT(problems.front(), HasSubstr("differ from what its ledger added"));
}

TEST_F(UserLayerCheckTest, UserStatsThatDisagreeWithTheUsersCountsAreFound) {
  // alice holds 2 spam documents of 6 tokens, 6 distinct; the record claims 3, 7 and 5.
  model::ModelStats stats;
  stats.classes = {{"spam", 3, 7}, {"ham", 0, 0}};
  stats.vocabulary_size = 5;
  WriteRaw(path_, kUsersFamily, UserStatsKey("alice"), EncodeModelStats(stats));
  const auto problems = Problems();
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[0], HasSubstr("token total of 7 in class 0 but its token counts sum to 6"));
  EXPECT_THAT(problems[1], HasSubstr("3 documents in class 0 but its ledger holds 2"));
  EXPECT_THAT(problems[2], HasSubstr("|V| 5 but 6 token records"));
}

TEST_F(UserLayerCheckTest, RecordsOfAUserWithoutStatsAndStraySourcesAreFound) {
  WriteRaw(path_, kUsersFamily, UserLedgerKey("erin", "x"),
           EncodeLedgerEntry({"spam", {{1, 1}}, {}, std::nullopt}));
  WriteRaw(path_, kUsersFamily, UserSourceKey("dave", "nothing", {"feedback", 1}), "");
  const auto problems = Problems();
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], HasSubstr("user 'dave' has 1 source index entries of no ledger record"));
  EXPECT_THAT(problems[1], HasSubstr("user 'erin' has 1 records but no stats record"));
}

TEST_F(UserLayerCheckTest, DamagedUserLayersAreRebuiltFromTheirLedgers) {
  const TokenBag words =
      BagOfWords("send us your password cheap pills verify account lunch review");
  std::map<std::string, std::optional<model::Snapshot>> before;
  {
    auto store = RocksdbStore::Open(path_);
    ASSERT_TRUE(store.has_value());
    for (const char* user : {"alice", "dave"}) {
      before[user] = *(*store)->ReadUser(user, *(*store)->Stats(), words.entries);
    }
  }
  WriteRaw(path_, kUsersFamily, UserTokenKey("alice", std::hash<std::string>{}("lunch")),
           EncodeTokenCounts({0, 4}));
  model::ModelStats stats;
  stats.classes = {{"spam", 9, 9}};
  WriteRaw(path_, kUsersFamily, UserStatsKey("alice"), EncodeModelStats(stats));
  WriteRaw(path_, kUsersFamily, UserSourceKey("alice", "gone", {"x", 1}), "");
  WriteRaw(path_, kUsersFamily, UserLedgerKey("alice", "corrupt"), "\xff");
  WriteRaw(path_, kUsersFamily, "no user", "");
  EXPECT_GE(Problems().size(), 5u);

  auto repaired = RepairModel(path_);
  ASSERT_TRUE(repaired.has_value()) << repaired.error().message;
  EXPECT_TRUE(repaired->ok()) << repaired->problems.front();
  EXPECT_EQ(repaired->user_layers, 2u);
  auto store = RocksdbStore::Open(path_);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  for (const char* user : {"alice", "dave"}) {
    const auto after = *(*store)->ReadUser(user, *(*store)->Stats(), words.entries);
    ASSERT_TRUE(after.has_value() && before[user].has_value()) << user;
    EXPECT_EQ(*after->stats, *before[user]->stats) << user;
    EXPECT_EQ(after->counts, before[user]->counts) << user;
  }
  EXPECT_FALSE((*store)->FindUserLearned("alice", "corrupt")->has_value());
  EXPECT_TRUE((*store)->FindUserLearned("alice", "u1")->has_value());
}

}  // namespace
}  // namespace nbspamd::storage
