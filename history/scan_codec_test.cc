#include "history/scan_codec.h"

#include <gtest/gtest.h>

#include <limits>

namespace nbspamd::history {
namespace {

ScanRecord Sample() {
  ScanRecord record;
  record.summary = {.scan_id = "018bcfe5680012340000",
                    .time_ms = 1'700'000'000'000,
                    .front_end = "milter",
                    .user = "alice",
                    .message_key = "<a@b>",
                    .label = "spam",
                    .verdict = "spam",
                    .score = 2.5,
                    .spam_confidence = 0.97,
                    .size = 4096,
                    .tokens = 321,
                    .facts = {.message_id = "a@b",
                              .from_domain = "example.org",
                              .subject = "#0123456789abcdef",
                              .client = "192.0.2.1",
                              .recipients = ""}};
  record.detail.top = {{"subject:watches", TokenSource::kHeader, 1, 3.25},
                       {"hello", TokenSource::kBody, 2, -1.5}};
  record.detail.bag = {
      {1, 1}, {2, 3}, {0x8000000000000000, 1}, {std::numeric_limits<TokenHash>::max(), 7}};
  return record;
}

TEST(ScanCodecTest, ASummaryAndADetailRoundTrip) {
  const ScanRecord record = Sample();
  auto summary = DecodeScanSummary(record.summary.scan_id, EncodeScanSummary(record.summary));
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(*summary, record.summary);
  auto detail = DecodeScanDetail(EncodeScanDetail(record.detail));
  ASSERT_TRUE(detail) << detail.error().message;
  EXPECT_EQ(*detail, record.detail);
}

TEST(ScanCodecTest, NoScoreNoConfidenceAndAnEmptyBagRoundTrip) {
  ScanRecord record = Sample();
  record.summary.score.reset();
  record.summary.spam_confidence.reset();
  record.detail = {};
  auto summary = DecodeScanSummary(record.summary.scan_id, EncodeScanSummary(record.summary));
  ASSERT_TRUE(summary);
  EXPECT_EQ(*summary, record.summary);
  auto detail = DecodeScanDetail(EncodeScanDetail(record.detail));
  ASSERT_TRUE(detail);
  EXPECT_EQ(*detail, record.detail);
}

TEST(ScanCodecTest, ABagOfRandomHashesCostsAboutNineBytesAToken) {
  ScanDetail detail;
  TokenHash hash = 0;
  for (int i = 0; i < 300; ++i) detail.bag.push_back({hash += 0x00d5a3c1b2e4f607ull, 1});
  const std::string encoded = EncodeScanDetail(detail);
  EXPECT_LE(encoded.size(), 300u * 10);
}

TEST(ScanCodecTest, EveryCutOrCorruptValueIsDataLoss) {
  const ScanRecord record = Sample();
  const std::string summary = EncodeScanSummary(record.summary);
  const std::string detail = EncodeScanDetail(record.detail);
  for (std::size_t size = 0; size < summary.size(); ++size) {
    auto decoded = DecodeScanSummary("x", summary.substr(0, size));
    ASSERT_FALSE(decoded) << size;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  }
  for (std::size_t size = 0; size < detail.size(); ++size) {
    auto decoded = DecodeScanDetail(detail.substr(0, size));
    ASSERT_FALSE(decoded) << size;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  }
  EXPECT_FALSE(DecodeScanSummary("x", summary + "z"));
  EXPECT_FALSE(DecodeScanDetail(detail + "z"));
  std::string other_format = summary;
  other_format[0] = 2;
  EXPECT_FALSE(DecodeScanSummary("x", other_format));
}

}  // namespace
}  // namespace nbspamd::history
