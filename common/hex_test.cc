#include "common/hex.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace nbspamd {
namespace {

TEST(HexTest, WritesWhatPrintfWrites) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t value =
        i < 3 ? static_cast<std::uint64_t>(i) * 0x7fffffffffffffffull : random();
    std::string hex = "x";
    AppendHex(hex, value, 16);
    char expected[20];
    std::snprintf(expected, sizeof expected, "x%016llx", static_cast<unsigned long long>(value));
    EXPECT_EQ(hex, expected);
  }
}

TEST(HexTest, KeepsTheLowDigitsZeroPadded) {
  std::string hex;
  AppendHex(hex, 0xabc, 8);
  AppendHex(hex, 0x123456789abcdefull, 12);
  AppendHex(hex, 0xff, 0);
  EXPECT_EQ(hex, "00000abc456789abcdef");
}

}  // namespace
}  // namespace nbspamd
