#include "storage/ascending_reader.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "tests/support/temp_dir.h"

namespace nbspamd::storage {
namespace {

std::string ReaderKey(int i) {
  char key[16];
  std::snprintf(key, sizeof key, "k%05d", i);
  return key;
}

// A database with every third key of 0..2999, half of them flushed to a table and the rest in
// the memory table, and every ninth of them deleted again: an iterator merges runs and skips
// deletions, as a model's does.
class AscendingReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_.Join("db"), &db).ok());
    db_.reset(db);
    for (int i = 0; i < 3000; i += 3) {
      ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), ReaderKey(i), "v" + std::to_string(i)).ok());
      if (i == 1500) {
        ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
      }
    }
    for (int i = 0; i < 3000; i += 27) {
      ASSERT_TRUE(db_->Delete(rocksdb::WriteOptions(), ReaderKey(i)).ok());
    }
  }

  // What a Get finds under `key`.
  std::optional<std::string> Get(const std::string& key) {
    std::string value;
    const rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), key, &value);
    EXPECT_TRUE(status.ok() || status.IsNotFound()) << status.ToString();
    if (status.IsNotFound()) return std::nullopt;
    return value;
  }

  // Expects `reader` to find what a Get does under ReaderKey(i).
  void ExpectSameAsGet(AscendingReader& reader, int i) {
    auto found = reader.Find(ReaderKey(i), "reading a test key");
    ASSERT_TRUE(found.has_value()) << found.error().message;
    const std::optional<std::string> expected = Get(ReaderKey(i));
    ASSERT_EQ(found->has_value(), expected.has_value()) << "key " << ReaderKey(i);
    if (expected) {
      EXPECT_EQ(**found, *expected) << "key " << ReaderKey(i);
    }
  }

  TempDir dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

TEST_F(AscendingReaderTest, FindsWhatAGetFindsInAscendingOrderNearAndFar) {
  AscendingReader reader(*db_, db_->DefaultColumnFamily(), rocksdb::ReadOptions());
  // Every key, present, absent and deleted, one after the other: reached by Next.
  for (int i = 0; i < 600; ++i) ExpectSameAsGet(reader, i);
  // Gaps from one key to far more than a few Nexts cover.
  std::mt19937 random(7);
  for (int i = 600; i < 3100; i += 1 + static_cast<int>(random() % 60)) ExpectSameAsGet(reader, i);
  // Past the last key, and then again.
  ExpectSameAsGet(reader, 3200);
  ExpectSameAsGet(reader, 3300);
}

TEST_F(AscendingReaderTest, AKeyAskedOutOfOrderIsStillFound) {
  AscendingReader reader(*db_, db_->DefaultColumnFamily(), rocksdb::ReadOptions());
  std::mt19937 random(11);
  for (int n = 0; n < 2000; ++n) ExpectSameAsGet(reader, static_cast<int>(random() % 3100));
  // After the end, a key before it.
  ExpectSameAsGet(reader, 3500);
  ExpectSameAsGet(reader, 999);
  ExpectSameAsGet(reader, 3);
}

TEST_F(AscendingReaderTest, ReadsTheSnapshotOfItsOptions) {
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), ReaderKey(1), "later").ok());
  ASSERT_TRUE(db_->Delete(rocksdb::WriteOptions(), ReaderKey(3)).ok());
  rocksdb::ReadOptions options;
  options.snapshot = snapshot;
  {
    AscendingReader reader(*db_, db_->DefaultColumnFamily(), options);
    auto one = reader.Find(ReaderKey(1), "reading a test key");
    ASSERT_TRUE(one.has_value());
    EXPECT_FALSE(one->has_value());
    auto three = reader.Find(ReaderKey(3), "reading a test key");
    ASSERT_TRUE(three.has_value());
    ASSERT_TRUE(three->has_value());
    EXPECT_EQ(**three, "v3");
  }
  db_->ReleaseSnapshot(snapshot);
}

}  // namespace
}  // namespace nbspamd::storage
