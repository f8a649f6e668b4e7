#include "replication/stream_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

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

StreamEvent GoldenRetire() {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kRetire;
  event.waiter = "w";
  event.learned_before = 1700000000;
  return event;
}

StreamEvent GoldenRetireStep() {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kRetireStep;
  event.waiter = "w";
  event.learned_before = 1700000000;
  event.retire_users = true;
  event.retire_max_records = 4;
  event.retire_from = std::string("a\0", 2);
  return event;
}

StreamEvent GoldenExpire(bool bounded) {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kExpire;
  if (bounded) {
    event.expiry_rule = {
        .seen_before = 1600000000, .max_count = 2, .keep_weight = 3.0, .alpha = 0.1};
    event.expiry_from = 0x1000000000000000;
    event.expiry_until = 0x2000000000000000;
  }
  return event;
}

StreamEvent GoldenExpireUsers(bool bounded) {
  StreamEvent event;
  event.kind = StreamEvent::Kind::kExpireUsers;
  event.waiter = "w";
  event.expiry_rule = {.seen_before = 1600000000, .max_count = 2, .keep_weight = 3.0, .alpha = 0.1};
  if (bounded) {
    event.user_expiry_from = std::string("bob\0", 4);
    event.user_expiry_until = std::string("eve\0", 4);
  }
  return event;
}

constexpr std::string_view kRetireHex =
    "0303"
    "00"
    "0177"
    "80e2cfaa06";
constexpr std::string_view kRetireStepHex =
    "0306"
    "00"
    "0177"
    "80e2cfaa06"  // learned_before
    "01"          // the users' ledgers
    "04"          // max_records
    "026100";     // from "a\0"
constexpr std::string_view kExpireHex =
    "0304"
    "00"
    "00"
    "80a0f8fa05"
    "02"                // seen_before, max_count
    "4008000000000000"  // keep_weight 3.0
    "3fb999999999999a"  // alpha 0.1
    "1000000000000000"  // from
    "01"
    "2000000000000000";  // until
constexpr std::string_view kExpireUsersHex =
    "0305"
    "00"
    "0177"
    "80a0f8fa05"
    "02"                // seen_before, max_count
    "4008000000000000"  // keep_weight 3.0
    "3fb999999999999a"  // alpha 0.1
    "04626f6200"        // from "bob\0"
    "01"
    "0465766500";  // until "eve\0"
constexpr std::string_view kExpireUsersToTheEndHex =
    "0305000177"
    "80a0f8fa0502"
    "40080000000000003fb999999999999a"
    "0000";
constexpr std::string_view kExpireToTheEndHex =
    "0304000000003ff000000000000000000000000000000000000000000000000000";

TEST(StreamCodecTest, GoldenBytesOfModelExpirySteps) {
  EXPECT_EQ(EncodeStreamEvent(GoldenRetire()), FromHex(kRetireHex));
  EXPECT_EQ(EncodeStreamEvent(GoldenExpire(true)), FromHex(kExpireHex));
  EXPECT_EQ(DecodeStreamEvent(FromHex(kRetireHex)), GoldenRetire());
  EXPECT_EQ(EncodeStreamEvent(GoldenRetireStep()), FromHex(kRetireStepHex));
  EXPECT_EQ(DecodeStreamEvent(FromHex(kRetireStepHex)), GoldenRetireStep());
  EXPECT_EQ(DecodeStreamEvent(FromHex(kExpireHex)), GoldenExpire(true));
  EXPECT_EQ(DecodeStreamEvent(EncodeStreamEvent(GoldenExpire(false))), GoldenExpire(false));
  EXPECT_EQ(EncodeStreamEvent(GoldenExpireUsers(true)), FromHex(kExpireUsersHex));
  EXPECT_EQ(EncodeStreamEvent(GoldenExpireUsers(false)), FromHex(kExpireUsersToTheEndHex));
  EXPECT_EQ(DecodeStreamEvent(FromHex(kExpireUsersHex)), GoldenExpireUsers(true));
  EXPECT_EQ(DecodeStreamEvent(FromHex(kExpireUsersToTheEndHex)), GoldenExpireUsers(false));
  const std::string_view damaged[] = {
      "0307000000",                    // kind 7
      "030600017780e2cfaa0602040000",  // users 2
      "030600017780e2cfaa06010000",    // max_records 0
      "030600017780e2cfaa060104",      // no from
      "030600017780e2cfaa0601040261",  // a short from
      "030600017780e2cfaa060104026100"
      "00",  // trailing byte
      "0305000177"
      "80a0f8fa050240080000000000003fb999999999999a0000"
      "00",  // trailing byte
      "0305000177"
      "80a0f8fa050240080000000000003fb999999999999a00",  // no has_until
      "0305000177"
      "80a0f8fa050240080000000000003fb999999999999a0001",  // no until
      "0305000177"
      "80a0f8fa050240080000000000003fb999999999999a0002",                        // has_until 2
      "0303026d310080e2cfaa06",                                                  // an id
      "030300017780e2cfaa0600",                                                  // trailing byte
      "0303000177",                                                              // no horizon
      "0304000000000000000000000000",                                            // a short rule
      "0304000080a0f8fa0502bff00000000000003fb999999999999a100000000000000000",  // weight -1
      "0304000080a0f8fa0502400800000000000000000000000000000010000000000000000"
      "0",                                                                       // alpha 0
      "0304000080a0f8fa050240080000000000003fb999999999999a100000000000000002",  // has_until 2
  };
  for (const std::string_view hex : damaged) {
    const auto decoded = DecodeStreamEvent(FromHex(hex));
    ASSERT_FALSE(decoded.has_value()) << hex;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss) << hex;
  }
}

// A rule that keeps the tokens counted in ham ends in byte 1; one without ends as before.
TEST(StreamCodecTest, GoldenBytesOfRulesThatKeepHamTokens) {
  StreamEvent expire = GoldenExpire(true);
  expire.expiry_rule.keep_ham = true;
  StreamEvent users = GoldenExpireUsers(true);
  users.expiry_rule.keep_ham = true;
  const std::string expire_hex = std::string(kExpireHex) + "01";
  const std::string users_hex = std::string(kExpireUsersHex) + "01";
  EXPECT_EQ(EncodeStreamEvent(expire), FromHex(expire_hex));
  EXPECT_EQ(EncodeStreamEvent(users), FromHex(users_hex));
  EXPECT_EQ(DecodeStreamEvent(FromHex(expire_hex)), expire);
  EXPECT_EQ(DecodeStreamEvent(FromHex(users_hex)), users);
  EXPECT_FALSE(DecodeStreamEvent(FromHex(kExpireHex))->expiry_rule.keep_ham);
  for (const std::string& hex : {std::string(kExpireHex) + "02", std::string(kExpireHex) + "00",
                                 expire_hex + "01", users_hex + "00"}) {
    const auto decoded = DecodeStreamEvent(FromHex(hex));
    ASSERT_FALSE(decoded.has_value()) << hex;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss) << hex;
  }
}

// A learn whose tokens include a word's character n-grams has their families in a field of its
// own: a count and a bitmap (entry 1 here); the event's bytes are those of the same learn of
// words, which daemons before the field read alike.
TEST(StreamCodecTest, GoldenBytesOfTokenFamilies) {
  StreamEvent learn = GoldenLearn();
  EXPECT_EQ(EncodeTokenFamilies(learn), "");
  learn.tokens[1].family = TokenFamily::kCharNgram;
  EXPECT_EQ(EncodeStreamEvent(learn), FromHex(kLearnHex));
  EXPECT_EQ(EncodeTokenFamilies(learn), FromHex("0102"));
  EXPECT_EQ(EncodeTokenFamilies(GoldenForget()), "");

  auto decoded = DecodeStreamEvent(FromHex(kLearnHex));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->tokens[1].family, TokenFamily::kWord);
  ASSERT_TRUE(DecodeTokenFamilies(FromHex("0102"), *decoded).has_value());
  EXPECT_EQ(*decoded, learn);
  ASSERT_TRUE(DecodeTokenFamilies("", *decoded).has_value());  // No field: nothing changes.
  EXPECT_EQ(*decoded, learn);

  // Two counted and one set; a bit past the last token; more n-grams than tokens; cut; more.
  for (const std::string_view hex : {"0202", "0104", "0302", "01", "010200"}) {
    StreamEvent event = *DecodeStreamEvent(FromHex(kLearnHex));
    const auto families = DecodeTokenFamilies(FromHex(hex), event);
    ASSERT_FALSE(families.has_value()) << hex;
    EXPECT_EQ(families.error().code, ErrorCode::kDataLoss) << hex;
  }
  StreamEvent forget = GoldenForget();
  EXPECT_FALSE(DecodeTokenFamilies(FromHex("0102"), forget).has_value());
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

TEST(StreamIdTest, ParsesAndOrders) {
  EXPECT_EQ(StreamId::Parse("1700000000000-3"), (StreamId{1700000000000, 3}));
  EXPECT_EQ(StreamId::Parse("0-0"), (StreamId{0, 0}));
  EXPECT_FALSE(StreamId::Parse(""));
  EXPECT_FALSE(StreamId::Parse("-1"));
  EXPECT_FALSE(StreamId::Parse("12-"));
  EXPECT_FALSE(StreamId::Parse("12"));
  EXPECT_FALSE(StreamId::Parse("a-1"));
  EXPECT_LT(*StreamId::Parse("5-9"), *StreamId::Parse("6-0"));
  EXPECT_LT(*StreamId::Parse("5-9"), *StreamId::Parse("5-10"));
  EXPECT_EQ(StreamId::Parse("17-4")->ToString(), "17-4");
}

// Golden values: the position reports every daemon of a cluster reads.
TEST(PositionReportTest, GoldenValues) {
  EXPECT_EQ(EncodePositionReport("1700000000000-3", 1700000000123),
            "1700000000000-3 1700000000123");
  EXPECT_EQ(EncodePositionReport("", 1700000000123), "0-0 1700000000123");  // Nothing applied.
  EXPECT_EQ(DecodePositionReport("1700000000000-3 1700000000123"),
            (PositionReport{{1700000000000, 3}, 1700000000123}));
  EXPECT_EQ(DecodePositionReport("0-0 5"), (PositionReport{{0, 0}, 5}));
}

TEST(PositionReportTest, RoundTrips) {
  for (const std::int64_t seen :
       {std::int64_t{0}, std::int64_t{1700000000123}, std::numeric_limits<std::int64_t>::max()}) {
    const auto decoded = DecodePositionReport(EncodePositionReport("17-4", seen));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
    EXPECT_EQ(*decoded, (PositionReport{{17, 4}, seen}));
  }
}

TEST(PositionReportTest, ATimeBeforeTheEpochIsStillATime) {
  // Written by a daemon whose clock is wrong: readable, and TrimFloor judges how recent it is.
  EXPECT_EQ(DecodePositionReport("1-0 -5"), (PositionReport{{1, 0}, -5}));
}

TEST(PositionReportTest, DamagedReportsAreDataLoss) {
  const std::string_view damaged[] = {
      "",                             // nothing
      "1700000000000-3",              // no time
      "1700000000000-3 ",             // an empty time
      "1700000000000 1700000000123",  // a position that is not a stream id
      "-3 1700000000123",             // nor this
      "garbage",                      // nor this
      "1-0 17x",                      // a time followed by more
      "1-0 1.5",                      // a time that is not whole
      "1-0  5",                       // two spaces
      "1-0 5 6",                      // more after the time
      "1-0 +5",                       // a sign that is not '-'
      "1-0 99999999999999999999",     // a time over 64 bits
      " 1-0 5",                       // a leading space
  };
  for (const std::string_view value : damaged) {
    const auto decoded = DecodePositionReport(value);
    ASSERT_FALSE(decoded.has_value()) << "'" << value << "'";
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss) << "'" << value << "'";
  }
}

}  // namespace
}  // namespace nbspamd::replication
