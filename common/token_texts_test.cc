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
