// What only the durable backend promises: everything survives a reopen, and a folder of another
// schema is refused.
#include "storage/rocksdb_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "model/learning.h"
#include "storage/encoding.h"
#include "storage/memory_store.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::storage {
namespace {

TokenBag Bag(std::vector<BagEntry> entries) {
  TokenBag bag;
  bag.entries = std::move(entries);
  return bag;
}

void Learn(Store& store, const std::string& id, const std::string& label, const TokenBag& bag) {
  const auto plan = model::PlanLearn(id, label, bag, *store.FindLearned(id), *store.Stats());
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

TEST(RocksdbStoreTest, ReopenGivesTheSameModel) {
  TempDir dir;
  const TokenBag bag = Bag({{1, 2}, {2, 1}, {3, 5}});
  model::Snapshot before;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    Learn(**store, "a", "spam", Bag({{1, 2}, {2, 1}}));
    Learn(**store, "b", "ham", Bag({{2, 1}, {3, 5}}));
    Learn(**store, "c", "newsletter", Bag({{3, 1}}));
    auto plan = model::PlanForget("a", *(*(*store)->FindLearned("a")), *(*store)->Stats());
    plan.stream_position = "42-0";
    ASSERT_TRUE((*store)->Apply(plan).has_value());
    Learn(**store, "a", "spam", Bag({{1, 2}}));
    before = (*store)->Read(bag.entries);
  }
  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  const model::Snapshot after = (*reopened)->Read(bag.entries);
  EXPECT_EQ(*after.stats, *before.stats);
  EXPECT_EQ(after.counts, before.counts);
  EXPECT_EQ((*reopened)->StreamPosition(), "42-0");
  const auto learned = (*reopened)->FindLearned("b");
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  EXPECT_EQ(**learned, (model::LedgerEntry{"ham", {{2, 1}, {3, 5}}, {}}));
  EXPECT_EQ(after.stats->classes.size(), 3u);
}

TEST(RocksdbStoreTest, ABatchSurvivesAKillRightAfterItIsApplied) {
  TempDir dir;
  // The deltas of a learn, a relearn of it, a forget and two learns, planned one by one on an
  // in-memory store: it starts no threads, so the fork below copies a single-threaded process.
  std::vector<model::Delta> deltas;
  MemoryStore planner;
  {
    const auto plan_and_apply = [&](model::Delta delta) {
      ASSERT_TRUE(planner.Apply(delta).has_value());
      deltas.push_back(std::move(delta));
    };
    auto& store = planner;
    plan_and_apply(
        model::PlanLearn("a", "spam", Bag({{1, 2}, {2, 1}}), std::nullopt, *store.Stats()).delta);
    plan_and_apply(
        model::PlanLearn("a", "ham", Bag({{1, 2}, {2, 1}}), *store.FindLearned("a"), *store.Stats())
            .delta);
    plan_and_apply(
        model::PlanLearn("b", "spam", Bag({{3, 4}}), std::nullopt, *store.Stats()).delta);
    plan_and_apply(model::PlanForget("b", **store.FindLearned("b"), *store.Stats()));
    plan_and_apply(
        model::PlanLearn("c", "newsletter", Bag({{2, 7}, {5, 1}}), std::nullopt, *store.Stats())
            .delta);
  }

  // A child applies the batch and is killed the moment ApplyBatch returns: no clean close.
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    auto store = RocksdbStore::Open(dir.Join("model"));
    if (!store) _exit(2);
    auto results = (*store)->ApplyBatch(deltas);
    if (!results) _exit(3);
    for (const auto& result : *results) {
      if (!result) _exit(4);
    }
    kill(getpid(), SIGKILL);
    _exit(5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  const TokenBag all = Bag({{1, 1}, {2, 1}, {3, 1}, {5, 1}});
  const model::Snapshot after = (*reopened)->Read(all.entries);
  const model::Snapshot expected = planner.Read(all.entries);
  EXPECT_EQ(*after.stats, *expected.stats);
  EXPECT_EQ(after.counts, expected.counts);
  EXPECT_EQ(after.stats->vocabulary_size, 3u);
  EXPECT_EQ(**(*reopened)->FindLearned("a"), (model::LedgerEntry{"ham", {{1, 2}, {2, 1}}, {}}));
  EXPECT_FALSE((*reopened)->FindLearned("b")->has_value());
  EXPECT_EQ((**(*reopened)->FindLearned("c")).label, "newsletter");
}

TEST(RocksdbStoreTest, OtherSchemaVersionIsAClearError) {
  TempDir dir;
  { ASSERT_TRUE(RocksdbStore::Open(dir.Join("model")).has_value()); }
  {
    rocksdb::DB* raw = nullptr;
    rocksdb::Options options;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"tokens", {}}, {"ledger", {}}, {"sources", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir.Join("model"), families, &handles, &raw).ok());
    ASSERT_TRUE(raw->Put({}, handles[0], "schema_version", "999").ok());
    for (auto* handle : handles) raw->DestroyColumnFamilyHandle(handle);
    delete raw;
  }
  const auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(store.error().message.find("schema version 999"), std::string::npos)
      << store.error().message;
}

TEST(RocksdbStoreTest, StatsThatDisagreeWithCountsAreRefused) {
  TempDir dir;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    Learn(**store, "a", "spam", Bag({{1, 2}}));
  }
  {
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"tokens", {}}, {"ledger", {}}, {"sources", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    ASSERT_TRUE(rocksdb::DB::Open({}, dir.Join("model"), families, &handles, &raw).ok());
    ASSERT_TRUE(raw->Put({}, handles[1], EncodeTokenKey(99), EncodeTokenCounts({1})).ok());
    for (auto* handle : handles) raw->DestroyColumnFamilyHandle(handle);
    delete raw;
  }
  const auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code, ErrorCode::kDataLoss);
}

TEST(RocksdbStoreTest, CreatesMissingParentFolders) {
  TempDir dir;
  auto store = RocksdbStore::Open(dir.Join("a/b/model"));
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ((*store)->Stats()->classes.size(), 2u);
}

TEST(RocksdbStoreTest, UnwritableFolderIsAClearError) {
  TempDir dir;
  const std::string file = dir.Join("file");
  { std::ofstream(file) << "x"; }
  const auto store = RocksdbStore::Open(file + "/model");
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code, ErrorCode::kInternal);
  EXPECT_NE(store.error().message.find(file), std::string::npos) << store.error().message;
}

TEST(RocksdbStoreTest, SecondOpenOfTheSameFolderFails) {
  TempDir dir;
  auto first = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(first.has_value());
  const auto second = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kInternal);
  EXPECT_NE(second.error().message.find("lock"), std::string::npos) << second.error().message;
}

}  // namespace
}  // namespace nbspamd::storage
