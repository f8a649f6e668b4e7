#include "tokenizer/whole_tokens.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace nbspamd::tokenizer {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::vector<std::pair<std::string, TokenSource>> All(const WholeTokens& tokens) {
  std::vector<std::pair<std::string, TokenSource>> all;
  for (const WholeTokens::Token& token : tokens) all.emplace_back(token.text, token.source);
  return all;
}

TEST(WholeTokensTest, KeepsEachTokensPiecesTogetherInOrder) {
  WholeTokens tokens;
  EXPECT_TRUE(tokens.empty());
  tokens.Add({"hname:", "subject"}, TokenSource::kHeader);
  tokens.AddValid({"meta:", "charset:", "utf-8"}, TokenSource::kMeta);
  tokens.Add({"url:example.org"}, TokenSource::kUrl);
  tokens.Add({"", ""}, TokenSource::kBody);  // An empty token is kept as one.
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_THAT(All(tokens), ElementsAre(Pair("hname:subject", TokenSource::kHeader),
                                       Pair("meta:charset:utf-8", TokenSource::kMeta),
                                       Pair("url:example.org", TokenSource::kUrl),
                                       Pair("", TokenSource::kBody)));
  EXPECT_EQ(tokens[1].text, "meta:charset:utf-8");
}

TEST(WholeTokensTest, AddRepairsIllFormedUtf8AndLeavesTheOthersAsTheyWere) {
  WholeTokens tokens;
  tokens.Add({"from:", "caf\xC3\xA9@example.org"}, TokenSource::kHeader);  // Valid: unchanged.
  tokens.Add({"hname:", "x-\xFF"}, TokenSource::kHeader);                  // A lone 0xFF.
  tokens.Add({"from-domain:", "example.org"}, TokenSource::kHeader);
  EXPECT_THAT(All(tokens),
              ElementsAre(Pair("from:caf\xC3\xA9@example.org", TokenSource::kHeader),
                          Pair("hname:x-\xEF\xBF\xBD", TokenSource::kHeader),  // U+FFFD.
                          Pair("from-domain:example.org", TokenSource::kHeader)));
}

TEST(WholeTokensTest, ViewsFollowTheBufferAsItGrows) {
  WholeTokens tokens;
  for (int i = 0; i < 5000; ++i) {
    tokens.AddValid({"head:", std::to_string(i), "-word"}, TokenSource::kHeader);
  }
  ASSERT_EQ(tokens.size(), 5000u);
  int i = 0;
  for (const WholeTokens::Token token : tokens) {
    ASSERT_EQ(token.text, "head:" + std::to_string(i++) + "-word");
  }
  EXPECT_EQ(i, 5000);
}

}  // namespace
}  // namespace nbspamd::tokenizer
