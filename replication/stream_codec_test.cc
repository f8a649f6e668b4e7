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

// Version 2: the same learn in alice's layer and the global model, a forget from bob's layer
// alone, and carol deleted. Written by hand from the format in stream_codec.h.
StreamEvent GoldenUserLearn() {
  StreamEvent event = GoldenLearn();
  event.user = "alice";
  event.train_global = true;
  return event;
}

StreamEvent GoldenUserForget() {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kForget;
  event.id = "m2";
  event.user = "bob";
  return event;
}

StreamEvent GoldenDeleteUser() {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kDeleteUser;
  event.waiter = "w";
  event.user = "carol";
  return event;
}

constexpr std::string_view kUserLearnHex =
    "0200"          // version 2, learn
    "026d31"        // id "m1"
    "05612f312f37"  // waiter "a/1/7"
    "05616c696365"  // user "alice"
    "01"            // and the global model
    "22047370616d02010203040506070803fffffffffffffffec801036f707380e2cfaa06";  // as version 1
constexpr std::string_view kUserForgetHex = "0201026d320003626f620000";
constexpr std::string_view kDeleteUserHex =
    "02020001770563"
    "61726f6c00";

TEST(StreamCodecTest, GoldenBytesOfUserEvents) {
  EXPECT_EQ(EncodeStreamEvent(GoldenUserLearn()), FromHex(kUserLearnHex));
  EXPECT_EQ(EncodeStreamEvent(GoldenUserForget()), FromHex(kUserForgetHex));
  EXPECT_EQ(EncodeStreamEvent(GoldenDeleteUser()), FromHex(kDeleteUserHex));
  EXPECT_EQ(DecodeStreamEvent(FromHex(kUserLearnHex)), GoldenUserLearn());
  EXPECT_EQ(DecodeStreamEvent(FromHex(kUserForgetHex)), GoldenUserForget());
  EXPECT_EQ(DecodeStreamEvent(FromHex(kDeleteUserHex)), GoldenDeleteUser());
}

TEST(StreamCodecTest, DamagedUserEventsAreDataLoss) {
  const std::string_view damaged[] = {
      "0201026d3200000000",        // no user
      "0201026d320003626f620200",  // train_global 2
      "020200000563"
      "61726f6c01",  // delete user with train_global
      "0202026d31000563"
      "61726f6c00",  // delete user with an id
      "020200000563"
      "61726f6c0000",            // trailing byte
      "0201026d320003626f6200",  // forget without its source byte
      "0102000003626f6200",      // delete user as version 1
      "0300026d3100",            // version 3
  };
  for (const std::string_view hex : damaged) {
    const auto decoded = DecodeStreamEvent(FromHex(hex));
    ASSERT_FALSE(decoded.has_value()) << hex;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss) << hex;
  }
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
