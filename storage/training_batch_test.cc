// EncodeTrainingBatch, the records of one training write, without a database.
#include "storage/training_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbspamd::storage {
namespace {

// What a sink was given: "put FAMILY KEY VALUE" or "delete FAMILY KEY", in order.
struct RecordingSink {
  std::vector<std::string> records;
  void Put(FamilyIndex family, std::string_view key, std::string_view value) {
    records.push_back("put " + std::to_string(family) + " " + std::string(key) + " " +
                      std::string(value));
  }
  void Delete(FamilyIndex family, std::string_view key) {
    records.push_back("delete " + std::to_string(family) + " " + std::string(key));
  }
};

std::string Put(FamilyIndex family, std::string_view key, std::string_view value) {
  return "put " + std::to_string(family) + " " + std::string(key) + " " + std::string(value);
}
std::string Delete(FamilyIndex family, std::string_view key) {
  return "delete " + std::to_string(family) + " " + std::string(key);
}

model::ModelStats TwoClasses(std::uint64_t documents) {
  model::ModelStats stats;
  stats.classes = {{"spam", documents, 3 * documents}, {"ham", 0, 0}};
  return stats;
}

TEST(TrainingBatchTest, EveryRecordInItsOrderAndRejectedDeltasLeftOut) {
  ResolvedDelta resolved;
  resolved.tokens = {{7, {2, 0}}, {9, {}}};  // 7 counted, 9 gone.
  resolved.stats = TwoClasses(2);
  resolved.feedback = model::FeedbackHistogram{};
  ResolvedUser alice;
  alice.user = "alice";
  alice.tokens = {{7, {1, 0}}};
  alice.stats = TwoClasses(1);
  ResolvedUser bob;  // A layer emptied by a forget.
  bob.user = "bob";
  bob.tokens = {{9, {}}};
  resolved.users.push_back(alice);
  resolved.users.push_back(bob);

  const model::LedgerEntry learned{"spam", {{7, 1}}, {"mx", 100}, std::nullopt};
  std::vector<model::Delta> deltas(4);
  deltas[0].ledger_id = "m1";  // A new learn, with a user record.
  deltas[0].ledger_entry = learned;
  deltas[0].stream_position = "1-0";
  deltas[0].user.emplace();
  deltas[0].user->user = "alice";
  deltas[0].user->ledger_id = "m1";
  deltas[0].user->ledger_entry = learned;
  deltas[1].ledger_id = "m2";  // Rejected: writes nothing.
  deltas[1].ledger_entry = learned;
  deltas[1].stream_position = "9-9";
  deltas[2].ledger_id = "m3";  // A relearn: the old source record goes.
  deltas[2].ledger_entry = learned;
  deltas[2].replaced_origin = model::LearnOrigin{"old", 5};
  deltas[3].ledger_id = "m4";  // A forget, of a user record too.
  deltas[3].replaced_origin = model::LearnOrigin{"mx", 50};
  deltas[3].stream_position = "2-0";
  deltas[3].user.emplace();
  deltas[3].user->user = "bob";
  deltas[3].user->ledger_id = "m4";
  deltas[3].user->replaced_origin = model::LearnOrigin{"mx", 50};
  const BatchResults results = {{}, std::unexpected(Error{ErrorCode::kInternal, "no"}), {}, {}};

  RecordingSink sink;
  const std::string* position = EncodeTrainingBatch(resolved, deltas, results, sink);
  ASSERT_NE(position, nullptr);
  EXPECT_EQ(*position, "2-0") << "the last accepted delta's";
  const std::string entry = EncodeLedgerEntry(learned);
  EXPECT_EQ(sink.records, (std::vector<std::string>{
                              Put(kTokens, EncodeTokenKey(7), EncodeTokenCounts({2, 0})),
                              Delete(kTokens, EncodeTokenKey(9)),
                              Put(kUsers, UserTokenKey("alice", 7), EncodeTokenCounts({1, 0})),
                              Put(kUsers, UserStatsKey("alice"), EncodeModelStats(TwoClasses(1))),
                              Delete(kUsers, UserTokenKey("bob", 9)),
                              Delete(kUsers, UserStatsKey("bob")),
                              Put(kUsers, UserLedgerKey("alice", "m1"), entry),
                              Put(kUsers, UserSourceKey("alice", "m1", {"mx", 100}), ""),
                              Put(kLedger, "m1", entry),
                              Put(kSources, EncodeSourceKey("m1", {"mx", 100}), ""),
                              Delete(kSources, EncodeSourceKey("m3", {"old", 5})),
                              Put(kLedger, "m3", entry),
                              Put(kSources, EncodeSourceKey("m3", {"mx", 100}), ""),
                              Delete(kUsers, UserSourceKey("bob", "m4", {"mx", 50})),
                              Delete(kUsers, UserLedgerKey("bob", "m4")),
                              Delete(kSources, EncodeSourceKey("m4", {"mx", 50})),
                              Delete(kLedger, "m4"),
                              Put(kMeta, kModelStatsKey, EncodeModelStats(TwoClasses(2))),
                              Put(kMeta, kCalibrationKey, EncodeFeedbackHistogram({})),
                              Put(kMeta, kStreamPositionKey, "2-0"),
                          }));
}

TEST(TrainingBatchTest, NoFeedbackChangeAndNoPositionWriteNeither) {
  ResolvedDelta resolved;
  resolved.stats = TwoClasses(1);
  std::vector<model::Delta> deltas(1);
  deltas[0].ledger_id = "m1";
  deltas[0].ledger_entry = model::LedgerEntry{"spam", {}, {}, std::nullopt};
  RecordingSink sink;
  EXPECT_EQ(EncodeTrainingBatch(resolved, deltas, BatchResults(1), sink), nullptr);
  ASSERT_FALSE(sink.records.empty());
  EXPECT_EQ(sink.records.back(), Put(kMeta, kModelStatsKey, EncodeModelStats(TwoClasses(1))));
}

}  // namespace
}  // namespace nbspamd::storage
