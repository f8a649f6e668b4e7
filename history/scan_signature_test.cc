#include "history/scan_signature.h"

#include <gtest/gtest.h>

#include <thread>

#include "history/body_digest.h"

namespace nbspamd::history {
namespace {

constexpr char kSignedScanId[] = "018bcfe5680012340000";

ScanKey FilledKey(unsigned char fill) {
  ScanKey key{};
  key.fill(fill);
  return key;
}

TEST(ScanSignatureTest, IsTheHmacOfTheIdAndTheBodyDigest) {
  // HMAC-SHA256 of "nbspamd-scan-1\0<id>\0" + 16 zero bytes under 32 bytes of 0x01, by Python's
  // hmac.new(bytes([1] * 32), b"nbspamd-scan-1\x00018bcfe5680012340000\x00" + bytes(16),
  // hashlib.sha256).hexdigest()[:32].
  EXPECT_EQ(SignScan(FilledKey(1), kSignedScanId, std::string(16, '\0')),
            "1af39394a14f04ac635745e451bc9b23");
}

TEST(ScanSignatureTest, EachKeySignsAsAloneWhateverKeySignedBeforeOnTheThread) {
  // A thread keeps its HMAC context keyed with the last key: a key again, another key, and the
  // golden signature after them, on this thread and on a new one.
  const std::string digest(16, '\0');
  const std::string first7 = SignScan(FilledKey(7), kSignedScanId, digest);
  const std::string first8 = SignScan(FilledKey(8), kSignedScanId, digest);
  EXPECT_NE(first7, first8);
  EXPECT_EQ(SignScan(FilledKey(7), kSignedScanId, digest), first7);
  EXPECT_EQ(SignScan(FilledKey(7), kSignedScanId, digest), first7);
  EXPECT_EQ(SignScan(FilledKey(8), kSignedScanId, digest), first8);
  EXPECT_EQ(SignScan(FilledKey(1), kSignedScanId, digest), "1af39394a14f04ac635745e451bc9b23");
  EXPECT_EQ(SignScan(FilledKey(1), kSignedScanId, digest), "1af39394a14f04ac635745e451bc9b23");
  std::string on_other_thread;
  std::thread([&] { on_other_thread = SignScan(FilledKey(8), kSignedScanId, digest); }).join();
  EXPECT_EQ(on_other_thread, first8);
}

TEST(ScanSignatureTest, HoldsOnlyForTheSameKeyIdAndBody) {
  const std::string digest = BodyDigest("Subject: a\r\n\r\nhello\r\n");
  const std::string signature = SignScan(FilledKey(7), kSignedScanId, digest);
  EXPECT_EQ(signature.size(), kScanSignatureLength);
  EXPECT_TRUE(ScanSignatureHolds(FilledKey(7), kSignedScanId, digest, signature));
  // The copy in a mailbox: other header fields, LF line ends.
  EXPECT_TRUE(ScanSignatureHolds(FilledKey(7), kSignedScanId,
                                 BodyDigest("Received: x\nSubject: a\n\nhello\n"), signature));
  EXPECT_FALSE(ScanSignatureHolds(FilledKey(8), kSignedScanId, digest, signature));
  EXPECT_FALSE(ScanSignatureHolds(FilledKey(7), "018bcfe5680012340001", digest, signature));
  EXPECT_FALSE(ScanSignatureHolds(FilledKey(7), kSignedScanId,
                                  BodyDigest("Subject: a\r\n\r\nhello!\r\n"), signature));
  EXPECT_FALSE(ScanSignatureHolds(FilledKey(7), kSignedScanId, digest, signature.substr(0, 31)));
  EXPECT_FALSE(ScanSignatureHolds(FilledKey(7), kSignedScanId, digest, ""));
}

TEST(ScanSignatureTest, KeysAreRandomAndRoundTripAsHex) {
  const ScanKey key = NewScanKey();
  EXPECT_NE(key, NewScanKey());
  const std::string hex = ScanKeyHex(key);
  EXPECT_EQ(hex.size(), 64u);
  auto parsed = ParseScanKeyHex(hex);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, key);
  EXPECT_FALSE(ParseScanKeyHex(hex.substr(1)).has_value());
  EXPECT_FALSE(ParseScanKeyHex(std::string(64, 'g')).has_value());
}

}  // namespace
}  // namespace nbspamd::history
