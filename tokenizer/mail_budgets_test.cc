// The plain-text pass before GMime, on its own: no MIME parser involved.
#include "tokenizer/mail_budgets.h"

#include <gtest/gtest.h>

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

TEST(MailBudgetsTest, TheCutThatBoundsMultipartNesting) {
  const std::string message =
      "Content-Type: multipart/mixed; boundary=a\n\n--a\nContent-Type: multipart/mixed; "
      "boundary=b\n\n--b\n";
  EXPECT_EQ(MultipartCut(message, 2), std::string::npos);
  EXPECT_EQ(MultipartCut(message, 1), message.find("Content-Type: multipart/mixed; boundary=b"));
}

}  // namespace
}  // namespace nbspamd::tokenizer
