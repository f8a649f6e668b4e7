#include "history/scan_header.h"

#include <gtest/gtest.h>

namespace nbspamd::history {
namespace {

constexpr char kId[] = "018bcfe5680012340000";
constexpr char kSig[] = "0123456789abcdef0123456789abcdef";

std::optional<std::string> IdOf(std::string_view message) {
  auto header = FindScanHeader(message);
  if (!header) return std::nullopt;
  return header->id;
}

std::string SignatureOf(std::string_view message) {
  auto header = FindScanHeader(message);
  return header ? header->signature : "missing";
}

TEST(ScanHeaderTest, TheMiltersStatusHeaderAndSpamdsHeaderNameTheScan) {
  EXPECT_EQ(IdOf(std::string("Received: x\r\nX-Nbspamd: spam 0.9 score=1.5 scan=") + kId +
                 "\r\nSubject: hi\r\n\r\nbody\r\n"),
            kId);
  EXPECT_EQ(IdOf(std::string("x-spam-scan-id: ") + kId + "\n\nbody\n"), kId);
  EXPECT_EQ(IdOf(std::string("X-Nbspamd: ham - score=-2 scan=") + kId), kId);  // No body.
}

TEST(ScanHeaderTest, OnlyAWholeWellFormedIdInTheHeaderBlockCounts) {
  EXPECT_EQ(IdOf("Subject: hi\r\n\r\nX-Nbspamd: spam 1 score=2 scan=018bcfe5680012340000\r\n"),
            std::nullopt);  // In the body.
  EXPECT_EQ(IdOf("X-Nbspamd: spam 1 score=2 scan=018BCFE5680012340000\r\n\r\n"), std::nullopt);
  EXPECT_EQ(IdOf("X-Nbspamd: spam 1 score=2 scan=018bcfe56800123400001\r\n\r\n"),
            std::nullopt);  // 21 digits.
  EXPECT_EQ(IdOf("X-Other: scan=018bcfe5680012340000\r\n\r\n"), std::nullopt);
  EXPECT_EQ(IdOf(""), std::nullopt);
}

TEST(ScanHeaderTest, TheFirstWellFormedHeaderFromTheTopWins) {
  const std::string message = std::string("X-Nbspamd: spam 1 score=2 scan=bogus\r\n") +
                              "X-Spam-Scan-Id: 018bcfe5680012340001\r\nX-Spam-Scan-Id: " + kId +
                              "\r\n\r\n";
  EXPECT_EQ(IdOf(message), "018bcfe5680012340001");
}

TEST(ScanHeaderTest, TheSignatureFollowsTheIdInEitherHeader) {
  EXPECT_EQ(SignatureOf(std::string("X-Nbspamd: spam 0.9 score=1.5 scan=") + kId + " sig=" + kSig +
                        "\r\n\r\nbody"),
            kSig);
  EXPECT_EQ(SignatureOf(std::string("X-Spam-Scan-Id: ") + kId + "; sig=" + kSig + "\n\nbody"),
            kSig);
  // Folded by a mail system that wraps long fields.
  EXPECT_EQ(SignatureOf(std::string("X-Nbspamd: spam 0.9 score=1.5 scan=") + kId +
                        "\r\n\tsig=" + kSig + "\r\nSubject: x\r\n\r\nbody"),
            kSig);
  EXPECT_EQ(IdOf(std::string("X-Nbspamd: spam 0.9 score=1.5\r\n scan=") + kId + "\r\n\r\n"), kId);
  // None, cut short, upper case or too long: the id without a signature.
  EXPECT_EQ(SignatureOf(std::string("X-Spam-Scan-Id: ") + kId + "\n\n"), "");
  EXPECT_EQ(SignatureOf(std::string("X-Spam-Scan-Id: ") + kId + "; sig=0123\n\n"), "");
  EXPECT_EQ(SignatureOf(std::string("X-Spam-Scan-Id: ") + kId +
                        "; sig=0123456789ABCDEF0123456789abcdef\n\n"),
            "");
  EXPECT_EQ(SignatureOf(std::string("X-Spam-Scan-Id: ") + kId + "; sig=" + kSig + "0\n\n"), "");
  // A field after the header block is not read, folded or not.
  EXPECT_EQ(IdOf(std::string("Subject: a\r\n\r\n X-Spam-Scan-Id: ") + kId + "\r\n"), std::nullopt);
}

}  // namespace
}  // namespace nbspamd::history
