#include "history/scan_codec.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

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
  record.detail.body_digest = std::string("0123456789abcdef");
  return record;
}

std::string Summary(const ScanSummary& summary, const BagLocation& detail) {
  std::string out;
  AppendScanSummary(out, summary);
  AppendDetailLocation(out, detail);
  return out;
}

std::string Detail(const ScanDetail& detail) {
  std::string out;
  AppendScanDetail(out, detail);
  return out;
}

// A bag alone, as format 2's bag log records held it: entries, hashes of 8 bytes little-endian,
// counts of one byte each (all < 128 here).
std::string FormatTwoBag(const std::vector<BagEntry>& bag) {
  std::string out(1, static_cast<char>(bag.size()));
  for (const BagEntry& entry : bag) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(entry.hash >> (8 * i)));
  }
  for (const BagEntry& entry : bag) out.push_back(static_cast<char>(entry.count));
  return out;
}

TEST(ScanCodecTest, ASummaryAndADetailRoundTrip) {
  const ScanRecord record = Sample();
  const BagLocation where{"018bcfe5680012340000", 123'456'789'012, 4000};
  auto summary = DecodeScanSummary(record.summary.scan_id, Summary(record.summary, where));
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->summary, record.summary);
  EXPECT_EQ(summary->detail_location, where);
  auto stored = DecodeScanDetail(Detail(record.detail));
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->detail, record.detail);
  EXPECT_FALSE(stored->bag_location);
}

TEST(ScanCodecTest, NoScoreNoConfidenceAndAnEmptyDetailRoundTrip) {
  ScanRecord record = Sample();
  record.summary.score.reset();
  record.summary.spam_confidence.reset();
  record.detail = {};
  auto summary = DecodeScanSummary(record.summary.scan_id, Summary(record.summary, {}));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->summary, record.summary);
  EXPECT_EQ(summary->detail_location, BagLocation{});
  auto stored = DecodeScanDetail(Detail(record.detail));
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->detail, record.detail);
}

TEST(ScanCodecTest, ABagCostsNineBytesATokenSeenFewerThan128Times) {
  ScanDetail detail;
  TokenHash hash = 0;
  for (int i = 0; i < 300; ++i) detail.bag.push_back({hash += 0x00d5a3c1b2e4f607ull, 1});
  // Format and no top token (2 bytes), 300 entries (2 bytes), 300 hashes of 8 and counts of 1,
  // no body digest (1 byte).
  EXPECT_EQ(Detail(detail).size(), 5u + 300 * 9);
  detail.bag.back().count = 128;  // A two-byte varint.
  EXPECT_EQ(Detail(detail).size(), 5u + 300 * 9 + 1);
}

// Format 5 keeps the family of each token of the bag (a word's character n-grams); a bag of
// words alone is written as format 4, byte for byte as before families existed.
TEST(ScanCodecTest, TokenFamiliesRoundTripAndABagOfWordsStaysFormatFour) {
  ScanRecord record = Sample();
  const std::string words = Detail(record.detail);
  EXPECT_EQ(words[0], 4);
  record.detail.bag[1].family = TokenFamily::kCharNgram;
  record.detail.bag[3].family = TokenFamily::kCharNgram;
  const std::string grams = Detail(record.detail);
  EXPECT_EQ(grams[0], 5);
  // Two n-grams, then a bitmap of one byte: entries 1 and 3.
  EXPECT_EQ(grams.substr(1), words.substr(1) + "\x02\x0a");
  auto stored = DecodeScanDetail(grams);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->detail, record.detail);
  auto read_words = DecodeScanDetail(words);
  ASSERT_TRUE(read_words);
  EXPECT_EQ(read_words->detail.bag[1].family, TokenFamily::kWord);

  const std::string head = grams.substr(0, grams.size() - 2);
  for (const std::string& bad : {head,                             // No families at all.
                                 head + "\x02\x02",                // Two counted, one set.
                                 head + "\x02\x1a",                // A bit past the last entry.
                                 head + "\x05\x0a",                // More than the bag holds.
                                 head + "\x02",                    // No bitmap.
                                 grams + std::string(1, '\0')}) {  // Something after.
    const auto decoded = DecodeScanDetail(bad);
    ASSERT_FALSE(decoded) << bad.size() - head.size();
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  }
  for (std::size_t size = 0; size < grams.size(); ++size) {
    EXPECT_FALSE(DecodeScanDetail(grams.substr(0, size))) << size;
  }
}

TEST(ScanCodecTest, AFormatOneSummaryHasItsDetailElsewhere) {
  const ScanRecord record = Sample();
  // Format 1 is format 2 without the location (here three bytes: "", 0, 0).
  std::string format_one = Summary(record.summary, {});
  format_one.resize(format_one.size() - 3);
  format_one[0] = 1;
  auto summary = DecodeScanSummary(record.summary.scan_id, format_one);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->summary, record.summary);
  EXPECT_FALSE(summary->detail_location);
}

TEST(ScanCodecTest, AFormatTwoDetailNamesItsBagWhichIsReadAlone) {
  // Format 2: one top token, then where the bag is: segment "x", offset 1, size 2.
  std::string format_two = {2, 1, 2, 'h', 'i', 0, 1};
  format_two += std::string(8, '\0');  // The weight, 0.0.
  format_two += {1, 'x', 1, 2};
  auto stored = DecodeScanDetail(format_two);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->detail.top, (std::vector<ScanToken>{{"hi", TokenSource::kBody, 1, 0.0}}));
  EXPECT_TRUE(stored->detail.bag.empty());
  EXPECT_EQ(stored->bag_location, (BagLocation{"x", 1, 2}));
  const std::vector<BagEntry> bag = {{5, 1}, {0x8000000000000001, 127}};
  auto read = DecodeScanBag(FormatTwoBag(bag));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, bag);
}

// Format 3 is format 4 without the body digest: read, with none.
TEST(ScanCodecTest, AFormatThreeDetailIsReadWithoutABodyDigest) {
  const ScanDetail detail = Sample().detail;
  std::string format_three = Detail(detail);
  format_three.resize(format_three.size() - 1 - detail.body_digest.size());
  format_three[0] = 3;
  auto stored = DecodeScanDetail(format_three);
  ASSERT_TRUE(stored.has_value()) << stored.error().message;
  EXPECT_EQ(stored->detail.top, detail.top);
  EXPECT_EQ(stored->detail.bag, detail.bag);
  EXPECT_EQ(stored->detail.body_digest, "");
  // And a format 4 detail without a digest.
  ScanDetail without = detail;
  without.body_digest.clear();
  auto empty = DecodeScanDetail(Detail(without));
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->detail, without);
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
  std::string encoded = Detail({});
  encoded[0] = 5;
  auto decoded = DecodeScanDetail(encoded);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  for (const std::vector<BagEntry>& bag :
       {std::vector<BagEntry>{{2, 1}, {1, 1}}, std::vector<BagEntry>{{1, 1}, {1, 2}}}) {
    // Encoded as given: the decoder checks.
    auto read = DecodeScanDetail(Detail({.top = {}, .bag = bag}));
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::kDataLoss);
    EXPECT_FALSE(DecodeScanBag(FormatTwoBag(bag)));
  }
  EXPECT_FALSE(DecodeScanDetail(Detail({.top = {}, .bag = {{1, 0}}})));
  EXPECT_FALSE(DecodeScanBag(FormatTwoBag({{1, 0}})));
}

TEST(ScanCodecTest, EveryTokenSourceRoundTripsAndAnUnknownOneIsDataLoss) {
  const std::string text = R"(b4:"Vi\xe0g")";
  const ScanDetail detail = {.top = {{text, kLastTokenSource, 1, 0.5}}, .bag = {{1, 1}}};
  std::string encoded = Detail(detail);
  auto read = DecodeScanDetail(encoded);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->detail, detail);
  // Format, one top token, the text's length and text, then its source.
  encoded[3 + text.size()] = static_cast<char>(static_cast<int>(kLastTokenSource) + 1);
  read = DecodeScanDetail(encoded);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kDataLoss);
}

TEST(ScanCodecTest, EveryCutOrCorruptValueIsDataLoss) {
  const ScanRecord record = Sample();
  const std::string summary = Summary(record.summary, {"018bcfe5680012340000", 1, 2});
  const std::string detail = Detail(record.detail);
  const std::string bag = FormatTwoBag(record.detail.bag);
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
  other_format[0] = 3;
  EXPECT_FALSE(DecodeScanSummary("x", other_format));
}

TEST(ScanCodecTest, AnEncodedScanHoldsItsIdSummaryAndDetail) {
  const ScanRecord record = Sample();
  const EncodedScan encoded(record);
  EXPECT_EQ(encoded.id(), record.summary.scan_id);
  const BagLocation where{"018bcfe5680012340000", 7, 9};
  std::string summary(encoded.summary());
  AppendDetailLocation(summary, where);
  EXPECT_EQ(summary, Summary(record.summary, where));
  EXPECT_EQ(encoded.detail_bytes(), Detail(record.detail));
  auto decoded = encoded.Decode();
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, record);
}

}  // namespace
}  // namespace nbspamd::history
