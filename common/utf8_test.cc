#include "common/utf8.h"

#include <gtest/gtest.h>

namespace nbspamd {
namespace {

TEST(Utf8Test, ReplaceInvalidUtf8) {
  EXPECT_EQ(ReplaceInvalidUtf8("plain \xC3\xA4 \xF0\x9F\x98\x80"),
            "plain \xC3\xA4 \xF0\x9F\x98\x80");
  EXPECT_EQ(ReplaceInvalidUtf8("a\xFF"
                               "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ReplaceInvalidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // Overlong.
  EXPECT_EQ(ReplaceInvalidUtf8("\xED\xA0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");            // Surrogate.
  EXPECT_EQ(ReplaceInvalidUtf8("x\xE2\x82"), "x\xEF\xBF\xBD");  // Cut short.
  EXPECT_TRUE(IsValidUtf8(ReplaceInvalidUtf8("\x80\xBF\xF5\xFE\xFF")));
}

TEST(Utf8Test, IsValidUtf8) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(IsValidUtf8("Grüße 北京 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("caf\xc3"));           // Truncated.
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // Overlong.
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // Encoded surrogate.
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // Beyond U+10FFFF.
  EXPECT_FALSE(IsValidUtf8("caf\xe9"));
}

}  // namespace
}  // namespace nbspamd
