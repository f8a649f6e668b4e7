#include "storage/encoding.h"

#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <random>
#include <vector>

namespace nbspamd::storage {
namespace {

TEST(EncodingTest, FixedWidthIntegersAreLittleEndian) {
  char bytes[8];
  EncodeFixed32(bytes, 0x01020304);
  EXPECT_EQ(std::string(bytes, 4), std::string("\x04\x03\x02\x01", 4));
  EXPECT_EQ(DecodeFixed32(bytes), 0x01020304u);
  EncodeFixed64(bytes, 0x0102030405060708);
  EXPECT_EQ(std::string(bytes, 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  EXPECT_EQ(DecodeFixed64(bytes), 0x0102030405060708u);
  EncodeFixed64(bytes, ~std::uint64_t{0});
  EXPECT_EQ(DecodeFixed64(bytes), ~std::uint64_t{0});
}

TEST(EncodingTest, VarintRoundTripsEdgeValues) {
  for (std::uint64_t value :
       std::vector<std::uint64_t>{0, 1, 127, 128, 300, std::uint64_t{1} << 35,
                                  std::numeric_limits<std::uint64_t>::max()}) {
    std::string out;
    PutVarint64(out, value);
    std::string_view input = out;
    std::uint64_t decoded = 0;
    ASSERT_TRUE(GetVarint64(input, decoded));
    EXPECT_EQ(decoded, value);
    EXPECT_TRUE(input.empty());
  }
}

TEST(EncodingTest, VarintRejectsTruncatedAndOverlongInput) {
  std::uint64_t value = 0;
  std::string_view truncated = "\x80\x80";
  EXPECT_FALSE(GetVarint64(truncated, value));
  std::string overlong(11, '\xff');
  std::string_view input = overlong;
  EXPECT_FALSE(GetVarint64(input, value));
}

TEST(EncodingTest, BagFamiliesSetBitIOfByteIOver8ForEachNgram) {
  std::mt19937_64 random(59);
  for (int round = 0; round < 2000; ++round) {
    std::vector<BagEntry> bag(random() % 40);
    const unsigned percent = static_cast<unsigned>(random() % 101);
    std::uint64_t grams = 0;
    for (std::size_t i = 0; i < bag.size(); ++i) {
      bag[i].hash = random();
      bag[i].count = 1;
      if (random() % 100 < percent) {
        bag[i].family = TokenFamily::kCharNgram;
        ++grams;
      }
    }
    std::string out = "prefix";
    PutBagFamilies(out, bag);
    // The format's definition (encoding.h), bit by bit.
    std::string expected = "prefix";
    PutVarint64(expected, grams);
    if (grams != 0) {
      std::string bitmap((bag.size() + 7) / 8, '\0');
      for (std::size_t i = 0; i < bag.size(); ++i) {
        if (bag[i].family == TokenFamily::kCharNgram)
          bitmap[i / 8] |= static_cast<char>(1 << (i % 8));
      }
      expected += bitmap;
    }
    ASSERT_EQ(out, expected) << "round " << round << ", " << bag.size() << " entries";
    std::vector<BagEntry> read = bag;
    for (BagEntry& entry : read) entry.family = TokenFamily::kWord;
    std::string_view input = std::string_view(out).substr(6);
    ASSERT_TRUE(GetBagFamilies(input, read));
    EXPECT_TRUE(input.empty());
    EXPECT_EQ(read, bag);
  }
}

TEST(EncodingTest, TokenKeyIsBigEndianSoKeysSortByHash) {
  EXPECT_EQ(EncodeTokenKey(0x0102030405060708ull),
            std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  EXPECT_LT(EncodeTokenKey(255), EncodeTokenKey(256));
  EXPECT_EQ(*DecodeTokenKey(EncodeTokenKey(0xdeadbeefcafef00dull)), 0xdeadbeefcafef00dull);
  EXPECT_EQ(DecodeTokenKey("short").error().code, ErrorCode::kDataLoss);
}

TEST(EncodingTest, TokenCountsRoundTrip) {
  const TokenCounts counts{3, 0, 1ull << 40};
  EXPECT_EQ(*DecodeTokenCounts(EncodeTokenCounts(counts)), counts);
  EXPECT_EQ(DecodeTokenCounts(EncodeTokenCounts(counts) + "x").error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(DecodeTokenCounts("\x05\x01").error().code, ErrorCode::kDataLoss);
}

TEST(EncodingTest, ModelStatsRoundTrip) {
  model::ModelStats stats;
  stats.classes = {{"spam", 4, 13}, {"ham", 2, 6}, {"", 0, 0}};
  stats.vocabulary_size = 6;
  EXPECT_EQ(*DecodeModelStats(EncodeModelStats(stats)), stats);
  const std::string encoded = EncodeModelStats(stats);
  for (std::size_t cut = 0; cut < encoded.size(); ++cut) {
    EXPECT_FALSE(DecodeModelStats(encoded.substr(0, cut)).has_value()) << cut;
  }
}

TEST(EncodingTest, LedgerEntryRoundTrip) {
  const model::LedgerEntry entry{"spam",
                                 {{1, 2}, {0xffffffffffffffffull, 4000000000u}},
                                 {"mx1", 1795000000},
                                 model::HeldOutScore{1, -0.0213}};
  EXPECT_EQ(*DecodeLedgerEntry(EncodeLedgerEntry(entry)), entry);
  const std::string encoded = EncodeLedgerEntry(entry);
  // A schema 2 record ends after learned_at, and reads back without a held-out score.
  const std::size_t schema2_size = encoded.size() - 1 - 1 - 8;
  const model::LedgerEntry schema2{entry.label, entry.tokens, entry.origin, std::nullopt};
  EXPECT_EQ(*DecodeLedgerEntry(encoded.substr(0, schema2_size)), schema2);
  EXPECT_EQ(EncodeLedgerEntry(schema2), encoded.substr(0, schema2_size))
      << "a record without a held-out score is written as schema 2 wrote it";
  // A schema 1 record ends after its tokens, and reads back with an empty origin.
  const std::size_t schema1_size = schema2_size - 1 - 3 - 5;
  const model::LedgerEntry schema1{entry.label, entry.tokens, {}, std::nullopt};
  EXPECT_EQ(*DecodeLedgerEntry(encoded.substr(0, schema1_size)), schema1);
  for (std::size_t cut = 0; cut < encoded.size(); ++cut) {
    if (cut == schema1_size || cut == schema2_size) continue;
    EXPECT_EQ(DecodeLedgerEntry(encoded.substr(0, cut)).error().code, ErrorCode::kDataLoss) << cut;
  }
  // An unknown field after learned_at, or trailing bytes, are corrupt.
  EXPECT_FALSE(DecodeLedgerEntry(encoded.substr(0, schema2_size) + '\x03').has_value());
  EXPECT_FALSE(DecodeLedgerEntry(encoded + '\0').has_value());
  // A retired record claiming tokens is corrupt.
  EXPECT_FALSE(DecodeLedgerEntry(encoded + '\x02').has_value());
}

TEST(EncodingTest, RetiredLedgerEntryRoundTrip) {
  // With and without a held-out score: a last byte 2 after everything else.
  model::LedgerEntry retired{"ham", {}, {"imap", 1795000000}, model::HeldOutScore{1, 0.25}};
  retired.retired = true;
  const std::string encoded = EncodeLedgerEntry(retired);
  EXPECT_EQ(encoded.back(), '\x02');
  EXPECT_EQ(*DecodeLedgerEntry(encoded), retired);
  retired.held_out.reset();
  EXPECT_EQ(*DecodeLedgerEntry(EncodeLedgerEntry(retired)), retired);
  EXPECT_FALSE(DecodeLedgerEntry(EncodeLedgerEntry(retired) + '\x02').has_value());
}

TEST(EncodingTest, CheckedLedgerEntryRoundTrip) {
  // A byte 3 after the held-out score; retired too, the byte 2 follows it.
  model::LedgerEntry checked{"spam", {}, {"mx1", 1795000000}, model::HeldOutScore{2, 3.5}};
  checked.checked = true;
  const std::string encoded = EncodeLedgerEntry(checked);
  EXPECT_EQ(encoded.back(), '\x03');
  EXPECT_EQ(*DecodeLedgerEntry(encoded), checked);
  checked.retired = true;
  EXPECT_EQ(EncodeLedgerEntry(checked), encoded + '\x02');
  EXPECT_EQ(*DecodeLedgerEntry(encoded + '\x02'), checked);
  // Twice, or after the retired mark, or with tokens, is corrupt.
  EXPECT_FALSE(DecodeLedgerEntry(encoded + '\x03').has_value());
  EXPECT_FALSE(DecodeLedgerEntry(encoded + '\x02' + '\x03').has_value());
  model::LedgerEntry with_tokens{"spam", {{7, 1}}, {"mx1", 1}, std::nullopt};
  EXPECT_FALSE(DecodeLedgerEntry(EncodeLedgerEntry(with_tokens) + '\x03').has_value());
}

TEST(EncodingTest, HeldOutScoresKeepEveryBit) {
  for (const double score : {0.0, -0.0, 1e-300, -1.7976931348623157e308, 0.1, 2.0 / 3}) {
    const model::LedgerEntry entry{"ham", {{7, 1}}, {"", 0}, model::HeldOutScore{9, score}};
    const auto decoded = DecodeLedgerEntry(EncodeLedgerEntry(entry));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(std::bit_cast<std::uint64_t>(decoded->held_out->score),
              std::bit_cast<std::uint64_t>(score));
    EXPECT_EQ(decoded->held_out->scale, 9u);
  }
}

TEST(EncodingTest, FeedbackHistogramRoundTrip) {
  model::FeedbackHistogram histogram;
  histogram.spam[0] = 1;
  histogram.spam[99] = 300;
  histogram.ham[42] = 1ull << 40;
  const std::string encoded = EncodeFeedbackHistogram(histogram);
  EXPECT_EQ(*DecodeFeedbackHistogram(encoded), histogram);
  for (std::size_t cut = 0; cut < encoded.size(); ++cut) {
    EXPECT_FALSE(DecodeFeedbackHistogram(encoded.substr(0, cut)).has_value()) << cut;
  }
  EXPECT_FALSE(DecodeFeedbackHistogram(encoded + '\0').has_value());
  // Another layout decodes as what it is.
  model::FeedbackHistogram other;
  other.layout = {7, 3, -2.0, 2.0};
  other.spam = {1, 2, 3};
  other.ham = {4, 5, 6};
  EXPECT_EQ(*DecodeFeedbackHistogram(EncodeFeedbackHistogram(other)), other);
}

}  // namespace
}  // namespace nbspamd::storage
