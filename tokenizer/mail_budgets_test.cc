// The plain-text pass before GMime, on its own: no MIME parser involved.
#include "tokenizer/mail_budgets.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace nbspamd::tokenizer {
namespace {

TEST(MailBudgetsTest, AMessageWithinTheBudgetsIsGivenAsItIs) {
  const std::string message = "From: a@example.org\nSubject: hi\n\nhello\n";
  std::string storage;
  const Budgeted budgeted = ApplyBudgets(message, MailReaderOptions{}, storage);
  EXPECT_EQ(budgeted.text, message);
  EXPECT_EQ(budgeted.text.data(), message.data()) << "not copied";
  EXPECT_FALSE(budgeted.headers_cut);
  EXPECT_FALSE(budgeted.parts_cut);
}

TEST(MailBudgetsTest, FieldsPastTheBudgetAreDropped) {
  const std::string message = "A: 1\nB: 2\nC: 3\n\nbody\n";
  MailReaderOptions options;
  options.max_header_fields = 2;
  std::string storage;
  const Budgeted budgeted = ApplyBudgets(message, options, storage);
  EXPECT_TRUE(budgeted.headers_cut);
  EXPECT_EQ(budgeted.text, "A: 1\nB: 2\n\nbody\n");
}

TEST(MailBudgetsTest, AnAddressCommentLeftOpenIsClosedAtTheEndOfItsField) {
  const std::string message = "From: a@[x](\nSubject: s\n\nbody\n";
  std::string storage;
  const Budgeted budgeted = ApplyBudgets(message, MailReaderOptions{}, storage);
  EXPECT_EQ(budgeted.text, "From: a@[x]()\nSubject: s\n\nbody\n");
  EXPECT_FALSE(budgeted.headers_cut);
}

// GMime also reads a field whose name has blanks before its colon, and leaked memory on an open
// comment there (a digest's part read as a message: the message fuzz target found it).
TEST(MailBudgetsTest, AnAddressFieldWithBlanksBeforeItsColonHasItsCommentClosedToo) {
  const std::string message = "Subject: s\n\nTo :a@[x](\\\n\nFrom\t: b@y (c\n\nNot a field (x\n";
  std::string storage;
  const Budgeted budgeted = ApplyBudgets(message, MailReaderOptions{}, storage);
  EXPECT_EQ(budgeted.text, "Subject: s\n\nTo :a@[x](\\ )\n\nFrom\t: b@y (c)\n\nNot a field (x\n");
}

TEST(MailBudgetsTest, TheCutThatBoundsMultipartNesting) {
  const std::string message =
      "Content-Type: multipart/mixed; boundary=a\n\n--a\nContent-Type: multipart/mixed; "
      "boundary=b\n\n--b\n";
  EXPECT_EQ(MultipartCut(message, 2), std::string::npos);
  EXPECT_EQ(MultipartCut(message, 1), message.find("Content-Type: multipart/mixed; boundary=b"));
}

// MultipartCut against its definition, a byte-by-byte search for "multipart/" in either case:
// random texts made of the word's pieces, slashes and line breaks, every limit up to 4.
TEST(MailBudgetsTest, TheCutFindsWhatAByteByByteSearchFinds) {
  auto reference = [](std::string_view text, std::size_t limit) {
    std::size_t seen = 0;
    for (std::size_t i = 0; i + 10 <= text.size(); ++i) {
      bool match = true;
      for (std::size_t j = 0; j < 10 && match; ++j) {
        const char c = text[i + j];
        match = (c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c) == "multipart/"[j];
      }
      if (match && ++seen > limit) {
        const std::size_t line = text.rfind('\n', i);
        return line == std::string_view::npos ? std::size_t{0} : line + 1;
      }
    }
    return std::string_view::npos;
  };
  const std::string_view pieces[] = {"multipart/", "MultiPart/", "MULTIPART/", "multipart",
                                     "ultipart/",  "multipar/",  "/",          "//",
                                     "\n",         "m",          "x",          "multipart//"};
  std::mt19937 random(63);
  std::size_t cuts = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int n = static_cast<int>(random() % 12); n > 0; --n) {
      text += pieces[random() % std::size(pieces)];
    }
    for (std::size_t limit = 0; limit <= 4; ++limit) {
      const std::size_t expected = reference(text, limit);
      ASSERT_EQ(MultipartCut(text, limit), expected) << text << " limit " << limit;
      if (expected != std::string_view::npos) ++cuts;
    }
  }
  EXPECT_GT(cuts, 10000u);
}

}  // namespace
}  // namespace nbspamd::tokenizer
