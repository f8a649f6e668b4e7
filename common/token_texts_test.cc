#include "common/token_texts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbspamd {
namespace {

TEST(TokenTextsTest, KeepsEachTextAndSourceInOrder) {
  TokenTexts texts;
  EXPECT_TRUE(texts.empty());
  texts.push_back({"subject:free", TokenSource::kHeader});
  texts.push_back({"", TokenSource::kBody});
  texts.push_back({"example.org", TokenSource::kUrl});
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[0], (TokenText{"subject:free", TokenSource::kHeader}));
  EXPECT_EQ(texts[1], (TokenText{"", TokenSource::kBody}));
  EXPECT_EQ(texts[2], (TokenText{"example.org", TokenSource::kUrl}));
  std::vector<std::string> seen;
  for (const TokenText& text : texts) seen.emplace_back(text.text);
  EXPECT_EQ(seen, (std::vector<std::string>{"subject:free", "", "example.org"}));
}

TEST(TokenTextsTest, AppendingManyKeepsEarlierTextsIntact) {
  TokenTexts texts;
  for (int i = 0; i < 1000; ++i) texts.push_back({"word" + std::to_string(i), TokenSource::kBody});
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(texts[i].text, "word" + std::to_string(i));
}

// Each length from 0 to 40 (the copy takes a different path below 4, to 8, to 16 and above), one
// after another so that each copy's neighbours would show a byte written too far, with and
// without room reserved, and in a copy.
TEST(TokenTextsTest, KeepsTextsOfEveryLengthExactly) {
  for (const bool reserved : {false, true}) {
    TokenTexts texts;
    if (reserved) texts.reserve(8, 64);
    std::vector<std::string> expected;
    for (int round = 0; round < 3; ++round) {
      for (std::size_t size = 0; size <= 40; ++size) {
        std::string text;
        for (std::size_t i = 0; i < size; ++i)
          text.push_back(static_cast<char>('a' + (i + size) % 26));
        expected.push_back(text);
        texts.push_back({text, TokenSource::kBody});
      }
    }
    const TokenTexts copy = texts;
    TokenTexts assigned;
    assigned.push_back({"overwritten", TokenSource::kMeta});
    assigned = copy;
    ASSERT_EQ(texts.size(), expected.size());
    ASSERT_EQ(assigned.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(texts[i].text, expected[i]) << "text " << i << (reserved ? ", reserved" : "");
      EXPECT_EQ(copy[i].text, expected[i]) << "copy's text " << i;
      EXPECT_EQ(assigned[i], texts[i]) << "assigned text " << i;
    }
  }
}

TEST(TokenTextsTest, ReorderedTakesTheGivenOrder) {
  TokenTexts texts;
  texts.push_back({"a", TokenSource::kBody});
  texts.push_back({"bb", TokenSource::kHeader});
  texts.push_back({"ccc", TokenSource::kMeta});
  const std::vector<std::uint32_t> order = {2, 0, 1};
  const TokenTexts reordered = std::move(texts).Reordered(order);
  TokenTexts expected;
  expected.push_back({"ccc", TokenSource::kMeta});
  expected.push_back({"a", TokenSource::kBody});
  expected.push_back({"bb", TokenSource::kHeader});
  EXPECT_EQ(reordered, expected);
}

TEST(TokenTextsTest, ReorderedTwiceComposes) {
  TokenTexts texts;
  for (const char* text : {"a", "b", "c", "d"}) texts.push_back({text, TokenSource::kBody});
  const TokenTexts twice = std::move(texts).Reordered({3, 1, 0, 2}).Reordered({1, 3, 0, 2});
  TokenTexts expected;
  for (const char* text : {"b", "c", "d", "a"}) expected.push_back({text, TokenSource::kBody});
  EXPECT_EQ(twice, expected);
}

TEST(TokenTextsTest, EqualityComparesTextsAndSourcesNotTheBuffer) {
  TokenTexts a;
  a.push_back({"ab", TokenSource::kBody});
  a.push_back({"c", TokenSource::kBody});
  TokenTexts b;
  b.push_back({"a", TokenSource::kBody});
  b.push_back({"bc", TokenSource::kBody});
  EXPECT_NE(a, b);  // The same bytes, cut elsewhere.
  TokenTexts c;
  c.push_back({"ab", TokenSource::kUrl});
  c.push_back({"c", TokenSource::kBody});
  EXPECT_NE(a, c);
  TokenTexts d;
  d.push_back({"ab", TokenSource::kBody});
  d.push_back({"c", TokenSource::kBody});
  EXPECT_EQ(a, d);
}

}  // namespace
}  // namespace nbspamd
