// BodyDigest: the same body through SMTP (CRLF) and in a mailbox (LF), with other headers, gives
// the same digest; another body does not.
#include "history/body_digest.h"

#include <gtest/gtest.h>

#include "common/hex.h"

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

// The first 16 bytes of SHA-256, by Python's hashlib.sha256(b"hello").hexdigest()[:32]; the same
// again after other bodies (each thread keeps its SHA-256 context).
TEST(BodyDigestTest, IsTheFirstHalfOfTheBodysSha256) {
  const auto hex = [](const std::string& digest) {
    std::string text;
    for (const unsigned char byte : digest) AppendHex(text, byte, 2);
    return text;
  };
  EXPECT_EQ(hex(BodyDigest("Subject: a\r\n\r\nhello\r\n")), "2cf24dba5fb0a30e26e83b2ac5b9e29e");
  EXPECT_EQ(hex(BodyDigest("")), "e3b0c44298fc1c149afbf4c8996fb924");
  EXPECT_EQ(hex(BodyDigest("Subject: b\n\nhel\rlo\n")), "2cf24dba5fb0a30e26e83b2ac5b9e29e");
}

// Without an empty line the whole text is the body (a plain-text /classify).
TEST(BodyDigestTest, TextWithoutAHeaderBlockIsAllBody) {
  EXPECT_EQ(BodyDigest("cheap pills now"), BodyDigest("cheap pills now\r\n"));
  EXPECT_NE(BodyDigest("cheap pills now"), BodyDigest("cheap pills later"));
  EXPECT_EQ(BodyDigest(""), BodyDigest("\r\n\r\n"));
}

}  // namespace
}  // namespace nbspamd::history
