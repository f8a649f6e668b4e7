#include "common/token_hash.h"

#include <gtest/gtest.h>

namespace nbspamd {
namespace {

// Golden values: HashToken is part of the on-disk format. If one of these fails, the hash
// changed and every stored model is invalid; restore the old function instead of updating these.
TEST(HashTokenTest, GoldenValues) {
  EXPECT_EQ(HashToken("hello"), 0x9555e8555c62dcfdULL);
  EXPECT_EQ(HashToken(""), 0x2d06800538d394c2ULL);  // The published XXH3_64bits("") value.
  EXPECT_EQ(HashToken("subject:free"), 0x2e4827eedbc6e6c6ULL);
  EXPECT_EQ(HashToken("h\xc3\xa9llo"), 0x6a45b79a7b549b1fULL);  // "héllo" as UTF-8 bytes.
}

TEST(HashTokenTest, HashesAllBytesIncludingPrefix) {
  EXPECT_NE(HashToken("subject:free"), HashToken("free"));
  EXPECT_NE(HashToken("hello"), HashToken("hello "));
  EXPECT_NE(HashToken("hello"), HashToken("Hello"));
}

TEST(HashTokenTest, DependsOnlyOnTheBytes) {
  const std::string owned = "hello world";
  EXPECT_EQ(HashToken(std::string_view(owned).substr(0, 5)), HashToken("hello"));
  const char with_nul[] = {'a', '\0', 'b'};
  EXPECT_NE(HashToken(std::string_view(with_nul, 3)), HashToken("a"));
}

}  // namespace
}  // namespace nbspamd
