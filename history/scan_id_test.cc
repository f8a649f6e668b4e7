#include "history/scan_id.h"

#include <gtest/gtest.h>

#include <set>

namespace nbspamd::history {
namespace {

TEST(ScanIdTest, AnIdCarriesItsTimeAndIdsSortByTime) {
  ScanIdGenerator ids(0x12345678);
  const std::string early = ids.Next(1'700'000'000'000);
  const std::string late = ids.Next(1'700'000'000'001);
  EXPECT_EQ(early.size(), kScanIdLength);
  EXPECT_EQ(early,
            "018bcfe568001234"
            "0000");
  EXPECT_EQ(ScanIdTime(early), 1'700'000'000'000);
  EXPECT_LT(early, late);
  EXPECT_LE(FirstScanIdAt(1'700'000'000'001), late);
  EXPECT_GT(FirstScanIdAt(1'700'000'000'001), early);
}

TEST(ScanIdTest, IdsOfOneMillisecondDoNotRepeat) {
  ScanIdGenerator ids(7);
  std::set<std::string> seen;
  for (int i = 0; i < 10'000; ++i) EXPECT_TRUE(seen.insert(ids.Next(42)).second);
}

TEST(ScanIdTest, OnlyTwentyLowerCaseHexDigitsAreAnId) {
  EXPECT_FALSE(ScanIdTime(""));
  EXPECT_FALSE(ScanIdTime("018bcfe5680012340000x"));
  EXPECT_FALSE(ScanIdTime("018bcfe568001234000"));
  EXPECT_FALSE(ScanIdTime("018BCFE5680012340000"));
  EXPECT_FALSE(ScanIdTime("018bcfe56800123400g0"));
  EXPECT_FALSE(ScanIdTime("../../etc/passwd0000"));
  EXPECT_EQ(ScanIdTime("00000000000a00000000"), 10);
}

}  // namespace
}  // namespace nbspamd::history
