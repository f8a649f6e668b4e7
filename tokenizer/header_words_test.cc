#include "tokenizer/header_words.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbspamd::tokenizer {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Words(std::string_view value) {
  std::vector<std::string> words;
  std::string buffer;
  ForEachHeaderWord(value, buffer, [&](const std::string& word) {
    words.push_back(word);
    return true;
  });
  return words;
}

TEST(HeaderWordsTest, KeepsHostsAddressesAndVersionsWhole) {
  EXPECT_THAT(
      Words("from Mail.Example.ORG (mx-1.example.org [192.0.2.17]) by x-mailer-2.1"),
      ElementsAre("from", "mail.example.org", "mx-1.example.org", "192.0.2.17", "x-mailer-2.1"));
  EXPECT_THAT(Words("<Bob.Smith@Shop.example.com>"), ElementsAre("bob.smith", "shop.example.com"));
}

TEST(HeaderWordsTest, DropsShortWordsAndPureNumbersAndTrimsPunctuation) {
  // "06", "48", "2002" are digits only; "id" and "by" are too short; trailing dots go.
  EXPECT_THAT(Words("id 06:48:09 by mx. on Tue, 6 Aug 2002 -0400 (EDT)"),
              ElementsAre("tue", "aug", "edt"));
  EXPECT_THAT(Words("... --- '''"), IsEmpty());
}

TEST(HeaderWordsTest, KeepsOneBangAndSplitsAtNonAscii) {
  EXPECT_THAT(Words("FREE!!! now"), ElementsAre("free!", "now"));
  EXPECT_THAT(Words("caf\xc3\xa9s bar\xc3\xa9t"), ElementsAre("caf", "bar"));
}

TEST(HeaderWordsTest, StopsWhenAskedTo) {
  std::vector<std::string> words;
  std::string buffer;
  ForEachHeaderWord("one two three four", buffer, [&](const std::string& word) {
    words.push_back(word);
    return words.size() < 2;
  });
  EXPECT_THAT(words, ElementsAre("one", "two"));
}

}  // namespace
}  // namespace nbspamd::tokenizer
