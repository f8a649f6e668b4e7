// BodyDigest: the same body through SMTP (CRLF) and in a mailbox (LF), with other headers, gives
// the same digest; another body does not.
#include "history/body_digest.h"

#include <gtest/gtest.h>

namespace nbspamd::history {
namespace {

TEST(BodyDigestTest, TheBodyAloneCountsWhateverTheHeadersAndLineEnds) {
  const std::string classified =
      "From: a@example.org\r\nSubject: lunch\r\n\r\nSee you at noon.\r\nBring the notes.\r\n";
  const std::string delivered =
      "Return-Path: <a@example.org>\nX-Nbspamd: ham - score=-2 scan=018bcfe5680012340000\n"
      "Received: from mx by mailbox\nFrom: a@example.org\nSubject: lunch\n\nSee you at noon.\n"
      "Bring the notes.\n\n";
  EXPECT_EQ(BodyDigest(classified).size(), kBodyDigestBytes);
  EXPECT_EQ(BodyDigest(classified), BodyDigest(delivered));
  EXPECT_NE(BodyDigest(classified),
            BodyDigest("From: a@example.org\r\n\r\nSee you at noon.\r\nBring cheap pills.\r\n"));
  EXPECT_NE(BodyDigest(classified), BodyDigest("Subject: lunch\r\n\r\n"));
}

// Without an empty line the whole text is the body (a plain-text /classify).
TEST(BodyDigestTest, TextWithoutAHeaderBlockIsAllBody) {
  EXPECT_EQ(BodyDigest("cheap pills now"), BodyDigest("cheap pills now\r\n"));
  EXPECT_NE(BodyDigest("cheap pills now"), BodyDigest("cheap pills later"));
  EXPECT_EQ(BodyDigest(""), BodyDigest("\r\n\r\n"));
}

}  // namespace
}  // namespace nbspamd::history
