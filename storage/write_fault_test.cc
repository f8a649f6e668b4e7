// Faults of the machine under the RocksDB store, through a fault-injecting file system: a write
// that fails is answered with an error and stops writes, nothing acknowledged is lost, nothing
// is half-applied, reads go on, and Recover brings writes back once the fault clears.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/model_check.h"
#include "storage/rocksdb_store.h"
#include "storage/testing/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::storage {
namespace {

using testing::FaultedFiles;
using testing::FaultedOperations;
using testing::FaultInjectingFileSystem;
using testing::InjectedFault;

// The bag of message number `i`: a few tokens shared by all, one of its own.
TokenBag BagOf(std::uint64_t i) {
  TokenBag bag;
  bag.entries = {{1, 2}, {2, 1}, {100 + i, 1}};
  return bag;
}

std::string IdOf(std::uint64_t i) {
  std::string id("m");
  id += std::to_string(i);
  return id;
}

std::expected<void, Error> Learn(Store& store, std::uint64_t i) {
  auto found = store.FindLearned(IdOf(i));
  if (!found) return std::unexpected(found.error());
  const auto plan =
      model::PlanLearn(IdOf(i), i % 2 ? "spam" : "ham", BagOf(i), *found, *store.Stats());
  return store.Apply(plan.delta);
}

class WriteFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    store_.reset();
    RocksdbStoreOptions options;
    options.file_system = fs_;
    options.resume_free_bytes = 0;
    options.log = [this](std::string_view line) {
      std::lock_guard lock(log_mutex_);
      log_.emplace_back(line);
    };
    auto store = RocksdbStore::Open(path_, options);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    store_ = std::move(*store);
  }

  // Learns messages [from, to), each acknowledged.
  void LearnAll(std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t i = from; i < to; ++i) {
      auto learned = Learn(*store_, i);
      ASSERT_TRUE(learned.has_value()) << learned.error().message;
    }
  }

  // After the store is closed: the folder's records agree and hold exactly `learned`.
  void ExpectOnDisk(const std::vector<std::uint64_t>& learned, std::uint64_t absent) {
    store_.reset();
    const auto report = CheckModel(path_);
    ASSERT_TRUE(report.has_value()) << report.error().message;
    EXPECT_TRUE(report->ok()) << report->problems.front();
    EXPECT_EQ(report->ledger_records, learned.size());
    Open();
    for (std::uint64_t i : learned) {
      auto found = store_->FindLearned(IdOf(i));
      ASSERT_TRUE(found.has_value());
      EXPECT_TRUE(found->has_value()) << IdOf(i) << " was acknowledged and is lost";
    }
    auto found = store_->FindLearned(IdOf(absent));
    ASSERT_TRUE(found.has_value());
    EXPECT_FALSE(found->has_value()) << IdOf(absent) << " failed and is in the ledger";
  }

  // Whether a line the store logged contains `text`.
  bool Logged(std::string_view text) {
    std::lock_guard lock(log_mutex_);
    for (const std::string& line : log_) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::shared_ptr<FaultInjectingFileSystem> fs_ = std::make_shared<FaultInjectingFileSystem>();
  std::mutex log_mutex_;
  std::vector<std::string> log_;
  TempDir dir_;
  const std::string path_ = dir_.Join("model");
  std::unique_ptr<RocksdbStore> store_;
};

TEST_F(WriteFaultTest, FullDiskStopsWritesUntilRecovered) {
  LearnAll(0, 20);
  const model::ModelStats before = *store_->Stats();
  const std::vector<std::uint64_t> counts = store_->Read(BagOf(3).entries).counts;
  fs_->Inject(InjectedFault::kNoSpace, FaultedFiles::kWriteAheadLog);

  auto failed = Learn(*store_, 20);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kInsufficientStorage);
  EXPECT_NE(failed.error().message.find(path_), std::string::npos) << failed.error().message;
  EXPECT_EQ(*store_->Stats(), before) << "memory changed by a write that failed";
  WriteHealth health = store_->Health();
  EXPECT_FALSE(health.writable);
  EXPECT_EQ(health.fault, WriteFault::kDiskFull);
  EXPECT_EQ(health.errors[static_cast<std::size_t>(WriteFault::kDiskFull)], 1u);
  EXPECT_NE(health.reason.find("disk full"), std::string::npos) << health.reason;

  // Stopped: RocksDB is not sent another write, and backups are refused too.
  const std::uint64_t injected = fs_->injected();
  auto again = Learn(*store_, 21);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kInsufficientStorage);
  EXPECT_EQ(fs_->injected(), injected);
  EXPECT_FALSE(store_->Checkpoint(dir_.Join("backup")).has_value());
  // Reads go on.
  EXPECT_TRUE(store_->FindLearned(IdOf(3)).value().has_value());
  EXPECT_EQ(store_->Read(BagOf(3).entries).counts, counts);

  // While the disk stays full, recovering fails and writes stay stopped.
  EXPECT_FALSE(store_->Recover().has_value());
  EXPECT_FALSE(store_->Health().writable);
  EXPECT_TRUE(store_->FindLearned(IdOf(3)).value().has_value()) << "the ledger must stay readable";

  fs_->Clear();
  auto recovered = store_->Recover();
  ASSERT_TRUE(recovered.has_value()) << recovered.error().message;
  health = store_->Health();
  EXPECT_TRUE(health.writable);
  EXPECT_EQ(health.recoveries, 1u);
  EXPECT_EQ(*store_->Stats(), before);
  LearnAll(22, 30);
  std::vector<std::uint64_t> learned;
  for (std::uint64_t i = 0; i < 30; ++i) {
    if (i != 20 && i != 21) learned.push_back(i);
  }
  ExpectOnDisk(learned, 20);
}

// The bytes reached the log but the sync failed: the write was refused, yet a reopen finds it
// whole. Memory must then take it, so that memory and disk agree.
TEST_F(WriteFaultTest, FailedSyncOfAWriteThatLandedIsReconciled) {
  LearnAll(0, 10);
  fs_->Inject(InjectedFault::kIoError, FaultedFiles::kWriteAheadLog, FaultedOperations::kSyncOnly);
  auto failed = Learn(*store_, 10);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(store_->Health().fault, WriteFault::kIoError);
  fs_->Clear();
  ASSERT_TRUE(store_->Recover().has_value());
  const model::ModelStats in_memory = *store_->Stats();
  const auto in_ledger = store_->FindLearned(IdOf(10));
  ASSERT_TRUE(in_ledger.has_value());
  LearnAll(11, 15);
  const model::ModelStats final_memory = *store_->Stats();
  store_.reset();
  Open();
  EXPECT_EQ(*store_->Stats(), final_memory) << "memory and disk disagree after recovery";
  // Either way, all of it or none of it: the counts agree with the ledger.
  EXPECT_EQ(in_memory.TotalDocuments(), in_ledger->has_value() ? 11u : 10u);
  store_.reset();
  const auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->ok()) << report->problems.front();
}

TEST_F(WriteFaultTest, ReadOnlyFileSystemIsItsOwnFault) {
  LearnAll(0, 3);
  fs_->Inject(InjectedFault::kReadOnly);
  auto failed = Learn(*store_, 3);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  const WriteHealth health = store_->Health();
  EXPECT_EQ(health.fault, WriteFault::kReadOnly);
  EXPECT_NE(health.reason.find("read-only"), std::string::npos) << health.reason;
  fs_->Clear();
  ASSERT_TRUE(store_->Recover().has_value());
  LearnAll(4, 6);
  ExpectOnDisk({0, 1, 2, 4, 5}, 3);
}

// A model on a disk that takes no writes at all still opens, read-only, and classifies.
TEST_F(WriteFaultTest, OpensReadOnlyOnAFullDisk) {
  LearnAll(0, 6);
  const model::ModelStats before = *store_->Stats();
  store_.reset();
  fs_->Inject(InjectedFault::kNoSpace);
  Open();
  EXPECT_FALSE(store_->Health().writable);
  EXPECT_EQ(store_->Health().fault, WriteFault::kDiskFull);
  EXPECT_TRUE(Logged("the model opened read-only")) << "the operator is told at start-up";
  EXPECT_EQ(*store_->Stats(), before);
  auto failed = Learn(*store_, 6);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kInsufficientStorage);
  fs_->Clear();
  ASSERT_TRUE(store_->Recover().has_value());
  LearnAll(7, 9);
  ExpectOnDisk({0, 1, 2, 3, 4, 5, 7, 8}, 6);
}

// Many faults in a row, at different points of a write: whatever was acknowledged survives.
TEST_F(WriteFaultTest, RepeatedFaultsLoseNothingAcknowledged) {
  std::vector<std::uint64_t> acknowledged;
  std::uint64_t next = 0;
  std::uint64_t failures = 0;
  for (std::uint64_t round = 0; round < 12; ++round) {
    fs_->Inject(round % 3 == 0 ? InjectedFault::kNoSpace : InjectedFault::kIoError,
                FaultedFiles::kAll,
                round % 2 ? FaultedOperations::kSyncOnly : FaultedOperations::kAll, round % 4);
    for (int k = 0; k < 5; ++k, ++next) {
      if (Learn(*store_, next)) {
        acknowledged.push_back(next);
      } else {
        ++failures;
      }
    }
    fs_->Clear();
    auto recovered = store_->Recover();
    ASSERT_TRUE(recovered.has_value()) << recovered.error().message;
  }
  EXPECT_GE(failures, 12u);
  store_.reset();
  const auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->ok()) << report->problems.front();
  Open();
  for (std::uint64_t i : acknowledged) {
    EXPECT_TRUE(store_->FindLearned(IdOf(i)).value().has_value()) << IdOf(i) << " lost";
  }
}

// A train of message `i` in user `user`'s layer and in the global model: one delta.
std::expected<void, Error> UserLearn(Store& store, const std::string& user, std::uint64_t i) {
  auto found = store.FindLearned(IdOf(i));
  if (!found) return std::unexpected(found.error());
  auto user_found = store.FindUserLearned(user, IdOf(i));
  if (!user_found) return std::unexpected(user_found.error());
  const auto stats = store.Stats();
  const char* label = i % 2 ? "spam" : "ham";
  auto plan = model::PlanLearn(IdOf(i), label, BagOf(i), *found, *stats);
  (void)model::AddUserLearn(plan.delta, user, IdOf(i), label, BagOf(i), *user_found, *stats);
  return store.Apply(plan.delta);
}

TEST_F(WriteFaultTest, AFailedUserTrainLeavesBothLayersUnchanged) {
  for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(UserLearn(*store_, "alice", i).has_value());
  const model::ModelStats global_before = *store_->Stats();
  const TokenBag bag = BagOf(6);
  const auto layer_before = *store_->ReadUser("alice", global_before, bag.entries);
  ASSERT_TRUE(layer_before.has_value());
  fs_->Inject(InjectedFault::kNoSpace, FaultedFiles::kWriteAheadLog);

  auto failed = UserLearn(*store_, "alice", 6);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kInsufficientStorage);
  EXPECT_EQ(*store_->Stats(), global_before);
  const auto layer_after = *store_->ReadUser("alice", global_before, bag.entries);
  ASSERT_TRUE(layer_after.has_value());
  EXPECT_EQ(*layer_after->stats, *layer_before->stats);
  EXPECT_EQ(layer_after->counts, layer_before->counts);
  EXPECT_EQ(store_->DeleteUser("alice").error().code, ErrorCode::kInsufficientStorage);

  fs_->Clear();
  ASSERT_TRUE(store_->Recover().has_value());
  EXPECT_FALSE(store_->FindUserLearned("alice", IdOf(6))->has_value());
  ASSERT_TRUE(UserLearn(*store_, "alice", 7).has_value());
  ExpectOnDisk({0, 1, 2, 3, 4, 5, 7}, 6);
  EXPECT_FALSE(store_->FindUserLearned("alice", IdOf(6))->has_value());
  EXPECT_EQ((*store_->UserStats("alice"))->TotalDocuments(), 7u);
}

// The bytes of a user train reached the log but the sync failed: after Recover the user's layer
// in memory is the one on disk, whichever that is.
TEST_F(WriteFaultTest, AUserTrainThatLandedDespiteAFailedSyncIsReadBack) {
  for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(UserLearn(*store_, "alice", i).has_value());
  fs_->Inject(InjectedFault::kIoError, FaultedFiles::kWriteAheadLog, FaultedOperations::kSyncOnly);
  ASSERT_FALSE(UserLearn(*store_, "alice", 4).has_value());
  fs_->Clear();
  ASSERT_TRUE(store_->Recover().has_value());
  const TokenBag bag = BagOf(4);
  const auto global = *store_->Stats();
  const auto in_memory = *store_->ReadUser("alice", global, bag.entries);
  const bool landed = store_->FindUserLearned("alice", IdOf(4))->has_value();
  EXPECT_EQ(store_->FindLearned(IdOf(4))->has_value(), landed) << "one write, both layers";
  EXPECT_EQ((*store_->UserStats("alice"))->TotalDocuments(), landed ? 5u : 4u);
  store_.reset();
  const auto report = CheckModel(path_);
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->ok()) << report->problems.front();
  Open();
  const auto on_disk = *store_->ReadUser("alice", global, bag.entries);
  ASSERT_TRUE(in_memory.has_value() && on_disk.has_value());
  EXPECT_EQ(*on_disk->stats, *in_memory->stats);
  EXPECT_EQ(on_disk->counts, in_memory->counts);
}

}  // namespace
}  // namespace nbspamd::storage
