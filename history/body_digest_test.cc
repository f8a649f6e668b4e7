// BodyDigest: the same body through SMTP (CRLF) and in a mailbox (LF), with other headers, gives
// the same digest; another body does not.
#include "history/body_digest.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

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

// A CRLF body is gathered in chunks between its carriage returns: bodies longer than a chunk,
// with lines longer than one and CRs at every offset around its edges, digest as the same body
// with LF alone, which is fed whole: both the SHA-256 of the body without CRs.
TEST(BodyDigestTest, ALongCrlfBodyDigestsAsItsLfCopy) {
  for (const std::size_t long_line : {8191u, 8192u, 8193u, 20000u}) {
    std::string lf = "Subject: long\n\n";
    std::string crlf = "Subject: long\r\n\r\n";
    std::string body;
    for (std::size_t line = 0; line < 40; ++line) {
      const std::size_t length = line == 7 ? long_line : (line * 37) % 300;
      std::string text;
      for (std::size_t i = 0; i < length; ++i)
        text.push_back(static_cast<char>('a' + (i + line) % 26));
      body += text + "\n";
      lf += text + "\n";
      crlf += text + "\r\n";
    }
    while (!body.empty() && body.back() == '\n') body.pop_back();
    EXPECT_EQ(BodyDigest(crlf), BodyDigest(lf)) << long_line;
    // The body with no header and a bare CR in it, through each path.
    EXPECT_EQ(BodyDigest(body + "\r"), BodyDigest(body)) << long_line;
    std::string with_cr = body;
    with_cr.insert(8192, "\r");
    EXPECT_EQ(BodyDigest(with_cr), BodyDigest(body)) << long_line;
    EXPECT_NE(BodyDigest(lf), BodyDigest(lf + "x")) << long_line;
  }
}

// Bodies of random lengths with CRs at random places, each against itself without them.
TEST(BodyDigestTest, CarriageReturnsAnywhereAreLeftOut) {
  std::mt19937 random(59);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t length = random() % 70;
    std::string body;
    for (std::size_t i = 0; i < length; ++i) body.push_back("ab\r\r\n\x8d\x0c"[random() % 7]);
    std::string without = body;
    std::erase(without, '\r');
    EXPECT_EQ(BodyDigest("S: x\n\n" + body), BodyDigest("S: x\n\n" + without)) << round;
  }
}

// Without an empty line the whole text is the body (a plain-text /classify).
TEST(BodyDigestTest, TextWithoutAHeaderBlockIsAllBody) {
  EXPECT_EQ(BodyDigest("cheap pills now"), BodyDigest("cheap pills now\r\n"));
  EXPECT_NE(BodyDigest("cheap pills now"), BodyDigest("cheap pills later"));
  EXPECT_EQ(BodyDigest(""), BodyDigest("\r\n\r\n"));
}

}  // namespace
}  // namespace nbspamd::history
