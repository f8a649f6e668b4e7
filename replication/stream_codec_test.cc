#include "replication/stream_codec.h"

#include <gtest/gtest.h>

#include <string>

namespace nbspamd::replication {
namespace {

std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

StreamEvent GoldenLearn() {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kLearn;
  event.id = "m1";
  event.waiter = "a/1/7";
  event.label = "spam";
  event.tokens = {{0x0102030405060708ULL, 3}, {0xfffffffffffffffeULL, 200}};
  event.origin = {"ops", 1700000000};
  return event;
}

StreamEvent GoldenForget() {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kForget;
  event.id = "m2";
  event.only_source = "ops";
  return event;
}

// Golden bytes: the wire format every daemon of a cluster reads. If one of these fails, the
// format changed: restore it, or add a new kStreamEventVersion that old daemons refuse cleanly
// and keep decoding version 1.
constexpr std::string_view kLearnHex =
    "0100026d3105612f312f3722047370616d02010203040506070803fffffffffffffffec801036f707380e2cfaa06";
constexpr std::string_view kForgetHex = "0101026d320001036f7073";

TEST(StreamCodecTest, GoldenBytes) {
  EXPECT_EQ(EncodeStreamEvent(GoldenLearn()), FromHex(kLearnHex));
  EXPECT_EQ(EncodeStreamEvent(GoldenForget()), FromHex(kForgetHex));
  EXPECT_EQ(DecodeStreamEvent(FromHex(kLearnHex)), GoldenLearn());
  EXPECT_EQ(DecodeStreamEvent(FromHex(kForgetHex)), GoldenForget());
}

TEST(StreamCodecTest, ALearnWithoutAnOriginDecodesWithAnEmptyOne) {
  // label "ham", no tokens, nothing after them.
  const auto decoded =
      DecodeStreamEvent(FromHex("0100026d330005"
                                "0368616d00"));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(decoded->label, "ham");
  EXPECT_TRUE(decoded->tokens.empty());
  EXPECT_EQ(decoded->origin.source, "");
  EXPECT_EQ(decoded->origin.learned_at, 0);
}

TEST(StreamCodecTest, AStorageOnlyHeldOutScoreIsNotPartOfTheWireFormat) {
  // The learn holder of kLearnHex with a trailing byte (the storage ledger's held-out tag).
  std::string bytes = FromHex(kLearnHex);
  bytes[11] = static_cast<char>(bytes[11] + 1);  // The holder's length.
  bytes.push_back(1);
  const auto decoded = DecodeStreamEvent(bytes);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace nbspamd::replication
