#include "history/scan_header.h"

#include <gtest/gtest.h>

namespace nbspamd::history {
namespace {

constexpr char kId[] = "018bcfe5680012340000";

TEST(ScanHeaderTest, TheMiltersStatusHeaderAndSpamdsHeaderNameTheScan) {
  EXPECT_EQ(FindScanId(std::string("Received: x\r\nX-Nbspamd: spam 0.9 score=1.5 scan=") + kId +
                       "\r\nSubject: hi\r\n\r\nbody\r\n"),
            kId);
  EXPECT_EQ(FindScanId(std::string("x-spam-scan-id: ") + kId + "\n\nbody\n"), kId);
  EXPECT_EQ(FindScanId(std::string("X-Nbspamd: ham - score=-2 scan=") + kId), kId);  // No body.
}

TEST(ScanHeaderTest, OnlyAWholeWellFormedIdInTheHeaderBlockCounts) {
  EXPECT_EQ(
      FindScanId("Subject: hi\r\n\r\nX-Nbspamd: spam 1 score=2 scan=018bcfe5680012340000\r\n"),
      std::nullopt);  // In the body.
  EXPECT_EQ(FindScanId("X-Nbspamd: spam 1 score=2 scan=018BCFE5680012340000\r\n\r\n"),
            std::nullopt);
  EXPECT_EQ(FindScanId("X-Nbspamd: spam 1 score=2 scan=018bcfe56800123400001\r\n\r\n"),
            std::nullopt);  // 21 digits.
  EXPECT_EQ(FindScanId("X-Other: scan=018bcfe5680012340000\r\n\r\n"), std::nullopt);
  EXPECT_EQ(FindScanId(""), std::nullopt);
}

TEST(ScanHeaderTest, TheFirstWellFormedHeaderFromTheTopWins) {
  const std::string message = std::string("X-Nbspamd: spam 1 score=2 scan=bogus\r\n") +
                              "X-Spam-Scan-Id: 018bcfe5680012340001\r\nX-Spam-Scan-Id: " + kId +
                              "\r\n\r\n";
  EXPECT_EQ(FindScanId(message), "018bcfe5680012340001");
}

}  // namespace
}  // namespace nbspamd::history
