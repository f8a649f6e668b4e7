#include "client/mbox_reader.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace nbspamd::client {
namespace {

std::vector<MboxMessage> ReadAll(const std::string& mbox, std::size_t limit = 1 << 20) {
  std::istringstream in(mbox);
  MboxReader reader(in, limit);
  std::vector<MboxMessage> messages;
  while (auto message = reader.Next()) messages.push_back(std::move(*message));
  return messages;
}

TEST(MboxReaderTest, SplitsAtFromLinesAndDropsSeparatorsAndTheirBlankLines) {
  const std::string mbox =
      "From a@example.org Mon Jan  1 00:00:00 2024\n"
      "Subject: one\n\nbody one\n\n"
      "From b@example.org Mon Jan  1 00:00:01 2024\n"
      "Subject: two\n\nbody two\n";
  const auto messages = ReadAll(mbox);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].body, "Subject: one\n\nbody one\n");
  EXPECT_EQ(messages[0].number, 1u);
  EXPECT_EQ(messages[1].body, "Subject: two\n\nbody two\n");
  EXPECT_EQ(messages[1].number, 2u);
  EXPECT_EQ(messages[0].consumed + messages[1].consumed, mbox.size());
}

TEST(MboxReaderTest, UnquotesMboxrdFromLinesByOneLevel) {
  const auto messages = ReadAll(
      "From x\nSubject: q\n\n>From here\n>>From there\n> From not quoted\nFrom_ no\n"
      "text >From inside\n");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].body,
            "Subject: q\n\nFrom here\n>From there\n> From not quoted\nFrom_ no\n"
            "text >From inside\n");
}

TEST(MboxReaderTest, KeepsALastMessageWithoutTrailingNewline) {
  const auto messages = ReadAll("From x\nA: 1\n\nfirst\n\nFrom y\nB: 2\n\nlast line");
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].body, "A: 1\n\nfirst\n");
  EXPECT_EQ(messages[1].body, "B: 2\n\nlast line");
}

TEST(MboxReaderTest, KeepsCrlfLineEndings) {
  const std::string mbox =
      "From x Mon\r\nSubject: one\r\n\r\nbody\r\n>From quoted\r\n\r\n"
      "From y Tue\r\nSubject: two\r\n\r\nbody two\r\n";
  const auto messages = ReadAll(mbox);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].body, "Subject: one\r\n\r\nbody\r\nFrom quoted\r\n");
  EXPECT_EQ(messages[1].body, "Subject: two\r\n\r\nbody two\r\n");
  EXPECT_EQ(messages[0].consumed + messages[1].consumed, mbox.size());
}

TEST(MboxReaderTest, OnlyLineStartsSeparateMessages) {
  const auto messages = ReadAll("From x\nSubject: s\n\nmail From someone\n");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].body, "Subject: s\n\nmail From someone\n");
}

TEST(MboxReaderTest, AMessageOverTheLimitIsFlaggedAndTheNextIsRead) {
  const std::string big(100, 'x');
  const auto messages = ReadAll("From a\n" + big + "\n\nFrom b\nsmall\n", 50);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_TRUE(messages[0].too_large);
  EXPECT_TRUE(messages[0].body.empty());
  EXPECT_GT(messages[0].size, 50u);
  EXPECT_FALSE(messages[1].too_large);
  EXPECT_EQ(messages[1].body, "small\n");
}

TEST(MboxReaderTest, AnEmptyStreamHasNoMessages) { EXPECT_TRUE(ReadAll("").empty()); }

TEST(MboxReaderTest, UnquoteFromLineRemovesOneQuoteOnlyBeforeFrom) {
  std::string line = ">>>From x";
  UnquoteFromLine(line);
  EXPECT_EQ(line, ">>From x");
  line = ">Fromage";
  UnquoteFromLine(line);
  EXPECT_EQ(line, ">Fromage");
  std::string lone(1, '>');
  UnquoteFromLine(lone);
  EXPECT_EQ(lone, ">");
}

}  // namespace
}  // namespace nbspamd::client
