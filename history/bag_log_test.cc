#include "history/bag_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "history/scan_id.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::history {
namespace {

// A scan id `minutes` minutes after a fixed time.
std::string IdAt(int minutes) { return FirstScanIdAt(1'790'000'000'000 + minutes * 60'000LL); }

TEST(BagLogTest, ABagIsReadBackOnceWrittenAndAfterAReopen) {
  TempDir dir;
  BagLocation first;
  BagLocation second;
  {
    auto log = BagLog::Open(dir.Join("bags"));
    ASSERT_TRUE(log) << log.error().message;
    first = (*log)->Append(IdAt(0), "first bag");
    second = (*log)->Append(IdAt(0), std::string(100'000, 'x'));
    EXPECT_EQ(first.segment, second.segment);
    EXPECT_EQ(second.offset, first.offset + 8 + 9);
    ASSERT_TRUE((*log)->Write());
    auto read = (*log)->Read(first);
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(*read, "first bag");
  }
  auto log = BagLog::Open(dir.Join("bags"));
  ASSERT_TRUE(log);
  EXPECT_EQ((*log)->Read(second).value_or(""), std::string(100'000, 'x'));
  // A reopened log never appends to an old segment (its tail may be cut).
  const BagLocation third = (*log)->Append(IdAt(1), "third");
  ASSERT_TRUE((*log)->Write());
  EXPECT_NE(third.segment, first.segment);
  EXPECT_EQ(third.offset, 0u);
  EXPECT_EQ((*log)->Segments().size(), 2u);
}

TEST(BagLogTest, AnErasedCutOrWrongRecordIsDataLossAndAMissingSegmentNotFound) {
  TempDir dir;
  auto log = BagLog::Open(dir.path().string());
  ASSERT_TRUE(log);
  const BagLocation where = (*log)->Append(IdAt(0), "secret tokens");
  ASSERT_TRUE((*log)->Write());
  BagLocation longer = where;
  longer.size += 1;
  EXPECT_EQ((*log)->Read(longer).error().code, ErrorCode::kDataLoss);
  BagLocation past = where;
  past.offset += 1000;
  EXPECT_EQ((*log)->Read(past).error().code, ErrorCode::kDataLoss);
  ASSERT_TRUE((*log)->Erase(where));
  EXPECT_EQ((*log)->Read(where).error().code, ErrorCode::kDataLoss);
  std::ifstream file(dir.Join("bags-" + where.segment), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(bytes.find("secret"), std::string::npos);
  BagLocation elsewhere = where;
  elsewhere.segment = IdAt(99);
  EXPECT_EQ((*log)->Read(elsewhere).error().code, ErrorCode::kNotFound);
  EXPECT_EQ((*log)->Erase(elsewhere).error().code, ErrorCode::kNotFound);
}

// A deleted user's bags, in two segments and out of order, with one of a segment gone: each
// erased (zeros on disk), the others read back, the gone segment skipped.
TEST(BagLogTest, EraseAllErasesEveryBagOfEverySegmentAndSkipsGoneSegments) {
  TempDir dir;
  std::vector<BagLocation> erase;
  BagLocation kept;
  {
    auto log = BagLog::Open(dir.path().string());
    ASSERT_TRUE(log);
    erase.push_back((*log)->Append(IdAt(0), "alice secret one"));
    kept = (*log)->Append(IdAt(0), "bob stays");
    erase.push_back((*log)->Append(IdAt(0), "alice secret two"));
    ASSERT_TRUE((*log)->Write());
  }
  auto log = BagLog::Open(dir.path().string());  // A new segment for what comes next.
  ASSERT_TRUE(log);
  erase.insert(erase.begin(), (*log)->Append(IdAt(1), "alice secret three"));
  ASSERT_TRUE((*log)->Write());
  BagLocation gone = erase.back();
  gone.segment = IdAt(99);
  erase.push_back(gone);
  ASSERT_TRUE((*log)->EraseAll(erase));
  for (std::size_t i = 0; i + 1 < erase.size(); ++i) {
    EXPECT_EQ((*log)->Read(erase[i]).error().code, ErrorCode::kDataLoss) << i;
  }
  EXPECT_EQ((*log)->Read(kept).value_or(""), "bob stays");
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    std::ifstream file(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), {});
    EXPECT_EQ(bytes.find("alice"), std::string::npos) << entry.path();
  }
}

TEST(BagLogTest, ASegmentGoesOnceAllItsScansAreOlderThanTheOldestKept) {
  TempDir dir;
  std::vector<BagLocation> segments;
  {
    // Three segments, started 0, 10 and 20 minutes in: one for each open.
    for (const int minutes : {0, 10, 20}) {
      auto log = BagLog::Open(dir.path().string());
      ASSERT_TRUE(log);
      segments.push_back((*log)->Append(IdAt(minutes), "bag"));
      ASSERT_TRUE((*log)->Write());
    }
  }
  auto log = BagLog::Open(dir.path().string());
  ASSERT_TRUE(log);
  ASSERT_EQ((*log)->Segments().size(), 3u);
  // The first segment holds scans up to minute 10: not while a scan of minute 10.5 is kept (a
  // minute's slack for scans that reached the writer out of order).
  EXPECT_EQ((*log)->DropBefore(IdAt(10)), 0u);
  EXPECT_EQ((*log)->DropBefore(FirstScanIdAt(1'790'000'000'000 + 10 * 60'000 + 30'000)), 0u);
  EXPECT_EQ((*log)->DropBefore(IdAt(11)), 1u);
  EXPECT_EQ((*log)->Read(segments[0]).error().code, ErrorCode::kNotFound);
  EXPECT_TRUE((*log)->Read(segments[1]));
  // The newest segment stays whatever the bound: it is the one appended to.
  EXPECT_EQ((*log)->DropBefore(IdAt(1000)), 1u);
  EXPECT_EQ((*log)->Segments().size(), 1u);
  EXPECT_TRUE((*log)->Read(segments[2]));
  EXPECT_FALSE(std::filesystem::exists(dir.Join("bags-" + segments[1].segment)));
}

TEST(BagLogTest, ANewSegmentStartsPastTheSegmentSize) {
  TempDir dir;
  auto log = BagLog::Open(dir.path().string());
  ASSERT_TRUE(log);
  const std::string big(BagLog::kSegmentBytes / 4, 'b');
  std::vector<BagLocation> written;
  for (int i = 0; i < 5; ++i) {
    written.push_back((*log)->Append(IdAt(i), big));
    ASSERT_TRUE((*log)->Write());
  }
  EXPECT_EQ(written[3].segment, written[0].segment);
  EXPECT_EQ(written[4].segment, IdAt(4));
  EXPECT_EQ(written[4].offset, 0u);
  for (const BagLocation& where : written)
    EXPECT_EQ((*log)->Read(where).value_or("").size(), big.size());
}

// Many writes of a few records each into one segment: every record reads back after each write
// and after a reopen, and one erased between writes stays erased, its bytes gone from the file.
TEST(BagLogTest, ManySmallWritesEachReadBackAndAnErasedOneStaysErased) {
  TempDir dir;
  std::vector<std::pair<BagLocation, std::string>> written;
  BagLocation erased;
  {
    auto log = BagLog::Open(dir.Join("bags"));
    ASSERT_TRUE(log);
    for (int i = 0; i < 300; ++i) {
      // Record 200 is unlike the others, so that its bytes can be looked for in the file.
      const std::string payload = i == 200
                                      ? std::string("secret tokens")
                                      : std::string(static_cast<std::size_t>(1 + (i * 37) % 700),
                                                    static_cast<char>('a' + i % 26));
      written.emplace_back((*log)->Append(IdAt(0), payload), payload);
      if (i % 3 == 2) {
        ASSERT_TRUE((*log)->Write());
        for (const auto& [where, bytes] : written) {
          if (where == erased) continue;
          ASSERT_EQ((*log)->Read(where).value_or("?"), bytes) << "record at " << where.offset;
        }
      }
      if (i == 200) {
        ASSERT_TRUE((*log)->Write());
        erased = written.back().first;
        ASSERT_TRUE((*log)->Erase(erased));
        EXPECT_EQ((*log)->Read(erased).error().code, ErrorCode::kDataLoss);
      }
    }
    EXPECT_EQ((*log)->Segments().size(), 1u);
  }
  std::ifstream file(dir.Join("bags/bags-" + erased.segment), std::ios::binary);
  const std::string on_disk((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(on_disk.find("secret"), std::string::npos);
  auto log = BagLog::Open(dir.Join("bags"));
  ASSERT_TRUE(log);
  for (const auto& [where, bytes] : written) {
    if (where == erased) {
      EXPECT_EQ((*log)->Read(where).error().code, ErrorCode::kDataLoss);
    } else {
      EXPECT_EQ((*log)->Read(where).value_or("?"), bytes) << "record at " << where.offset;
    }
  }
}

}  // namespace
}  // namespace nbspamd::history
