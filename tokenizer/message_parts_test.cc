#include "tokenizer/message_parts.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace nbspamd::tokenizer {
namespace {

TEST(SplitMessageTest, PlainTextIsAllBody) {
  const std::string_view text = "just some words\nand more\n\nand more";
  const MessageParts parts = SplitMessage(text);
  EXPECT_FALSE(parts.is_mail);
  EXPECT_TRUE(parts.headers.empty());
  EXPECT_EQ(parts.body, text);
}

TEST(SplitMessageTest, EmptyInputIsPlainText) {
  const MessageParts parts = SplitMessage("");
  EXPECT_FALSE(parts.is_mail);
  EXPECT_TRUE(parts.body.empty());
}

TEST(SplitMessageTest, LfMail) {
  const MessageParts parts =
      SplitMessage("From: a@example.com\nSubject: Hello there\n\nBody line\nsecond\n");
  EXPECT_TRUE(parts.is_mail);
  ASSERT_EQ(parts.headers.size(), 2u);
  EXPECT_EQ(parts.headers[0].name, "From");
  EXPECT_EQ(parts.headers[0].value, "a@example.com");
  EXPECT_EQ(parts.headers[1].name, "Subject");
  EXPECT_EQ(parts.headers[1].value, "Hello there");
  EXPECT_EQ(parts.body, "Body line\nsecond\n");
}

TEST(SplitMessageTest, CrlfMail) {
  const MessageParts parts =
      SplitMessage("From: a@example.com\r\nSubject:  Hello there \r\n\r\nBody line\r\n");
  EXPECT_TRUE(parts.is_mail);
  ASSERT_EQ(parts.headers.size(), 2u);
  EXPECT_EQ(parts.headers[1].value, "Hello there");  // Trimmed, no trailing CR.
  EXPECT_EQ(parts.body, "Body line\r\n");
}

TEST(SplitMessageTest, UnfoldsContinuationLines) {
  const MessageParts parts =
      SplitMessage("Subject: first part\r\n second\r\n\tthird\r\nTo: b\r\n\r\nbody");
  ASSERT_EQ(parts.headers.size(), 2u);
  EXPECT_EQ(parts.headers[0].value, "first part second\tthird");
  EXPECT_EQ(parts.headers[1].name, "To");
  EXPECT_EQ(parts.headers[1].value, "b");
  EXPECT_EQ(parts.body, "body");
}

TEST(SplitMessageTest, HeaderOnlyWithoutBlankLine) {
  const MessageParts parts = SplitMessage("Subject: only headers\nX-Foo: bar");
  EXPECT_TRUE(parts.is_mail);
  ASSERT_EQ(parts.headers.size(), 2u);
  EXPECT_EQ(parts.headers[1].name, "X-Foo");
  EXPECT_EQ(parts.headers[1].value, "bar");
  EXPECT_TRUE(parts.body.empty());
}

TEST(SplitMessageTest, EmptyValueAndEmptyBody) {
  const MessageParts parts = SplitMessage("Subject:\n\n");
  EXPECT_TRUE(parts.is_mail);
  ASSERT_EQ(parts.headers.size(), 1u);
  EXPECT_EQ(parts.headers[0].value, "");
  EXPECT_TRUE(parts.body.empty());
}

// Documented: a text whose first line reads like a header field is taken for mail.
TEST(SplitMessageTest, FirstLineLikeAHeaderMakesItMail) {
  const MessageParts parts = SplitMessage("Hello: world\n\nhow are you");
  EXPECT_TRUE(parts.is_mail);
  ASSERT_EQ(parts.headers.size(), 1u);
  EXPECT_EQ(parts.headers[0].name, "Hello");
  EXPECT_EQ(parts.body, "how are you");
}

// Lenient: a non-header line inside the header block starts the body.
TEST(SplitMessageTest, NonHeaderLineEndsHeaderBlock) {
  const MessageParts parts = SplitMessage("Hello: world\nhow are you\nSubject: x\n\nend");
  EXPECT_TRUE(parts.is_mail);
  ASSERT_EQ(parts.headers.size(), 1u);
  EXPECT_EQ(parts.body, "how are you\nSubject: x\n\nend");
}

TEST(SplitMessageTest, FirstLineMustBeAField) {
  EXPECT_FALSE(SplitMessage("Hello world: not a field name\n\nbody").is_mail);  // Space in name.
  EXPECT_FALSE(SplitMessage(": no name\n\nbody").is_mail);
  EXPECT_FALSE(SplitMessage(" Subject: folded first\n\nbody").is_mail);
  EXPECT_FALSE(SplitMessage("\nSubject: after blank").is_mail);
  EXPECT_FALSE(SplitMessage("Subject no colon\n\nbody").is_mail);
  EXPECT_FALSE(SplitMessage("Subj\xc3\xa9t: non-ASCII name\n\nbody").is_mail);
  EXPECT_TRUE(SplitMessage("X-Weird!#Name: v\n\nbody").is_mail);
}

TEST(SplitMessageTest, BodyPointsIntoInput) {
  const std::string message = "A: b\n\nthe body";
  const MessageParts parts = SplitMessage(message);
  EXPECT_EQ(parts.body.data(), message.data() + 6);
}

TEST(HeaderNameEqualsTest, CaseInsensitiveAscii) {
  EXPECT_TRUE(HeaderNameEquals("Subject", "subject"));
  EXPECT_TRUE(HeaderNameEquals("SUBJECT", "sUbJeCt"));
  EXPECT_FALSE(HeaderNameEquals("Subject", "Subjects"));
  EXPECT_FALSE(HeaderNameEquals("Subject", "Subjekt"));
  EXPECT_TRUE(HeaderNameEquals("", ""));
}

}  // namespace
}  // namespace nbspamd::tokenizer

namespace nbspamd::tokenizer {
namespace {

TEST(MessagePartsTest, FirstLineStartingWithAUrlIsText) {
  EXPECT_FALSE(SplitMessage("http://spam.example.com buy now\nmore").is_mail);
  EXPECT_FALSE(SplitMessage("https://x.example/y").is_mail);
  EXPECT_TRUE(SplitMessage("X-Url: http://x.example/\n\nbody").is_mail);
}

// The tokenizer asks only where the body starts: without the headers, the same answer.
TEST(MessagePartsTest, WithoutHeadersTheSameMailAndBody) {
  std::mt19937 random(4711);
  static constexpr std::string_view kPieces[] = {"Subject: s",  "X-A:",     " folded", "\tfolded",
                                                 "not a field", "http://x", "\n",      "\r\n",
                                                 "\n\n",        ":",        " ",       "word"};
  for (int round = 0; round < 5000; ++round) {
    std::string message;
    const int pieces = static_cast<int>(random() % 12);
    for (int i = 0; i < pieces; ++i) message += kPieces[random() % std::size(kPieces)];
    const MessageParts with = SplitMessage(message);
    const MessageParts without = SplitMessage(message, /*with_headers=*/false);
    ASSERT_EQ(with.is_mail, without.is_mail) << message;
    ASSERT_EQ(with.body.data(), without.body.data()) << message;
    ASSERT_EQ(with.body.size(), without.body.size()) << message;
    EXPECT_TRUE(without.headers.empty());
  }
}

}  // namespace
}  // namespace nbspamd::tokenizer
