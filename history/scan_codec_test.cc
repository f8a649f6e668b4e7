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
  const BagLocation where{"018bcfe5680012340000", 123'456'789'012, 4000};
  auto stored = DecodeScanDetail(EncodeScanDetail(record.detail, where));
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->detail.top, record.detail.top);
  EXPECT_TRUE(stored->detail.bag.empty());  // In the bag log.
  EXPECT_EQ(stored->bag_location, where);
  auto bag = DecodeScanBag(EncodeScanBag(record.detail.bag));
  ASSERT_TRUE(bag) << bag.error().message;
  EXPECT_EQ(*bag, record.detail.bag);
}

TEST(ScanCodecTest, NoScoreNoConfidenceAndAnEmptyBagRoundTrip) {
  ScanRecord record = Sample();
  record.summary.score.reset();
  record.summary.spam_confidence.reset();
  record.detail = {};
  auto summary = DecodeScanSummary(record.summary.scan_id, EncodeScanSummary(record.summary));
  ASSERT_TRUE(summary);
  EXPECT_EQ(*summary, record.summary);
  auto stored = DecodeScanDetail(EncodeScanDetail(record.detail, {}));
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->detail, record.detail);
  EXPECT_EQ(stored->bag_location, BagLocation{});
  auto bag = DecodeScanBag(EncodeScanBag({}));
  ASSERT_TRUE(bag);
  EXPECT_TRUE(bag->empty());
}

TEST(ScanCodecTest, ABagCostsNineBytesATokenSeenFewerThan128Times) {
  std::vector<BagEntry> bag;
  TokenHash hash = 0;
  for (int i = 0; i < 300; ++i) bag.push_back({hash += 0x00d5a3c1b2e4f607ull, 1});
  // 300 entries (2 bytes), 300 hashes of 8 and counts of 1.
  EXPECT_EQ(EncodeScanBag(bag).size(), 2u + 300 * 9);
  bag.back().count = 128;  // A two-byte varint.
  EXPECT_EQ(EncodeScanBag(bag).size(), 2u + 300 * 9 + 1);
}

TEST(ScanCodecTest, AFormatOneDetailWithItsBagIsStillRead) {
  // Format 1: one top token, then two entries as varint hash differences and varint counts:
  // hash 5 count 1, hash 5 + 300 count 130.
  std::string format_one = {1, 1, 2, 'h', 'i', 0, 1};
  format_one += std::string(8, '\0');  // The weight, 0.0.
  format_one += {2, 5, 1, static_cast<char>(0xac), 2, static_cast<char>(0x82), 1};
  auto stored = DecodeScanDetail(format_one);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->detail.top, (std::vector<ScanToken>{{"hi", TokenSource::kBody, 1, 0.0}}));
  EXPECT_EQ(stored->detail.bag, (std::vector<BagEntry>{{5, 1}, {305, 130}}));
  EXPECT_FALSE(stored->bag_location);
}

TEST(ScanCodecTest, AnUnknownFormatOrABagOutOfOrderIsDataLoss) {
  std::string encoded = EncodeScanDetail({}, {"x", 1, 2});
  encoded[0] = 3;
  auto decoded = DecodeScanDetail(encoded);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  for (const std::vector<BagEntry>& bag :
       {std::vector<BagEntry>{{2, 1}, {1, 1}}, std::vector<BagEntry>{{1, 1}, {1, 2}}}) {
    auto read = DecodeScanBag(EncodeScanBag(bag));  // Encoded as given: the decoder checks.
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::kDataLoss);
  }
  auto zero_count = DecodeScanBag(EncodeScanBag(std::vector<BagEntry>{{1, 0}}));
  EXPECT_FALSE(zero_count);
}

TEST(ScanCodecTest, EveryCutOrCorruptValueIsDataLoss) {
  const ScanRecord record = Sample();
  const std::string summary = EncodeScanSummary(record.summary);
  const std::string detail = EncodeScanDetail(record.detail, {"018bcfe5680012340000", 1, 2});
  const std::string bag = EncodeScanBag(record.detail.bag);
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
  for (std::size_t size = 0; size < bag.size(); ++size) {
    auto decoded = DecodeScanBag(bag.substr(0, size));
    ASSERT_FALSE(decoded) << size;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  }
  EXPECT_FALSE(DecodeScanSummary("x", summary + "z"));
  EXPECT_FALSE(DecodeScanDetail(detail + "z"));
  EXPECT_FALSE(DecodeScanBag(bag + "z"));
  std::string other_format = summary;
  other_format[0] = 2;
  EXPECT_FALSE(DecodeScanSummary("x", other_format));
}

}  // namespace
}  // namespace nbspamd::history
