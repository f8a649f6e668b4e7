#include "milter/protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace nbspamd::milter {
namespace {

using namespace std::string_literals;

// A packet as the MTA sends it: 4-byte big-endian length (code + data), code, data.
std::string Packet(char code, std::string_view data) {
  const auto length = static_cast<std::uint32_t>(data.size() + 1);
  std::string out;
  out.push_back(static_cast<char>(length >> 24));
  out.push_back(static_cast<char>((length >> 16) & 0xff));
  out.push_back(static_cast<char>((length >> 8) & 0xff));
  out.push_back(static_cast<char>(length & 0xff));
  out.push_back(code);
  out.append(data);
  return out;
}

std::expected<std::optional<Command>, Error> DecodeOne(std::string_view bytes,
                                                       std::size_t limit = 1 << 16) {
  PacketDecoder decoder(limit);
  decoder.Feed(bytes);
  return decoder.Next();
}

TEST(PacketDecoderTest, DecodesEveryCommand) {
  auto optneg = DecodeOne(Packet('O', "\0\0\0\x06\0\0\0\x3f\0\x1f\xff\xff"s));
  ASSERT_TRUE(optneg.has_value() && optneg->has_value());
  const auto& o = std::get<OptionNegotiation>(**optneg);
  EXPECT_EQ(o.version, 6u);
  EXPECT_EQ(o.actions, 0x3fu);
  EXPECT_EQ(o.protocol, 0x1fffffu);

  auto macros = DecodeOne(Packet('D', "M{auth_authen}\0alice\0i\0ABC123\0"s));
  ASSERT_TRUE(macros.has_value() && macros->has_value());
  const auto& m = std::get<Macros>(**macros);
  EXPECT_EQ(m.for_command, 'M');
  ASSERT_EQ(m.values.size(), 2u);
  EXPECT_EQ(m.values[0].first, "{auth_authen}");
  EXPECT_EQ(m.values[0].second, "alice");
  EXPECT_EQ(m.values[1].second, "ABC123");

  auto connect = DecodeOne(Packet('C',
                                  "mx.example.org\0"
                                  "4\x01\xbb"
                                  "192.0.2.1\0"s));
  ASSERT_TRUE(connect.has_value() && connect->has_value());
  const auto& c = std::get<Connect>(**connect);
  EXPECT_EQ(c.hostname, "mx.example.org");
  EXPECT_EQ(c.family, '4');
  EXPECT_EQ(c.port, 443);
  EXPECT_EQ(c.address, "192.0.2.1");

  auto unknown_family = DecodeOne(Packet('C', "host\0U"s));
  ASSERT_TRUE(unknown_family.has_value() && unknown_family->has_value());
  EXPECT_EQ(std::get<Connect>(**unknown_family).family, 'U');

  auto rcpt = DecodeOne(Packet('R', "<bob@example.org>\0NOTIFY=NEVER\0"s));
  ASSERT_TRUE(rcpt.has_value() && rcpt->has_value());
  EXPECT_EQ(std::get<Rcpt>(**rcpt).args,
            (std::vector<std::string>{"<bob@example.org>", "NOTIFY=NEVER"}));

  auto header = DecodeOne(Packet('L', "Subject\0hello\0"s));
  ASSERT_TRUE(header.has_value() && header->has_value());
  EXPECT_EQ(std::get<Header>(**header).name, "Subject");
  EXPECT_EQ(std::get<Header>(**header).value, "hello");

  auto body = DecodeOne(Packet('B', "line\r\n\0binary"s));
  ASSERT_TRUE(body.has_value() && body->has_value());
  EXPECT_EQ(std::get<Body>(**body).chunk, "line\r\n\0binary"s);

  for (char code : {'T', 'N', 'A', 'Q', 'K'}) {
    auto empty = DecodeOne(Packet(code, ""));
    ASSERT_TRUE(empty.has_value() && empty->has_value()) << code;
  }
  auto eob = DecodeOne(Packet('E', ""));
  ASSERT_TRUE(eob.has_value() && eob->has_value());
  EXPECT_TRUE(std::holds_alternative<EndOfBody>(**eob));
}

TEST(PacketDecoderTest, WaitsForWholePacketsFedByteByByte) {
  const std::string stream = Packet('L', "From\0a@b\0"s) + Packet('N', "") + Packet('B', "hi");
  PacketDecoder decoder(1024);
  int commands = 0;
  for (char byte : stream) {
    decoder.Feed(std::string_view(&byte, 1));
    while (true) {
      auto next = decoder.Next();
      ASSERT_TRUE(next.has_value()) << next.error().message;
      if (!*next) break;
      ++commands;
    }
  }
  EXPECT_EQ(commands, 3);
  EXPECT_FALSE(decoder.HasPartialPacket());
}

TEST(PacketDecoderTest, TruncatedPacketWaitsAndIsPartial) {
  const std::string whole = Packet('L', "Subject\0x\0"s);
  for (std::size_t cut = 1; cut < whole.size(); ++cut) {
    PacketDecoder decoder(1024);
    decoder.Feed(std::string_view(whole).substr(0, cut));
    auto next = decoder.Next();
    ASSERT_TRUE(next.has_value());
    EXPECT_FALSE(next->has_value()) << cut;
    EXPECT_TRUE(decoder.HasPartialPacket());
  }
}

struct MalformedCase {
  const char* name;
  std::string bytes;
  ErrorCode code;
};

class MalformedTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedTest, IsAProtocolErrorAndSticky) {
  PacketDecoder decoder(1024);
  decoder.Feed(GetParam().bytes);
  auto first = decoder.Next();
  ASSERT_FALSE(first.has_value()) << GetParam().name;
  EXPECT_EQ(first.error().code, GetParam().code) << first.error().message;
  decoder.Feed(Packet('N', ""));  // A good packet after a bad one changes nothing.
  auto again = decoder.Next();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, GetParam().code);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MalformedTest,
    ::testing::Values(
        MalformedCase{"zero_length", "\0\0\0\0"s, ErrorCode::kInvalidArgument},
        MalformedCase{"absurd_length",
                      "\x7f\xff\xff\xff"
                      "O"s,
                      ErrorCode::kResourceExhausted},
        MalformedCase{"length_just_over_limit", "\0\0\x04\x01"s, ErrorCode::kResourceExhausted},
        MalformedCase{"max_uint32_length", "\xff\xff\xff\xff"s, ErrorCode::kResourceExhausted},
        MalformedCase{"unknown_command", Packet('Z', ""), ErrorCode::kInvalidArgument},
        MalformedCase{"reply_code_as_command", Packet('c', ""), ErrorCode::kInvalidArgument},
        MalformedCase{"nul_command", Packet('\0', ""), ErrorCode::kInvalidArgument},
        MalformedCase{"optneg_short", Packet('O', "\0\0\0\x06\0\0"s), ErrorCode::kInvalidArgument},
        MalformedCase{"macro_empty", Packet('D', ""), ErrorCode::kInvalidArgument},
        MalformedCase{"macro_without_value", Packet('D', "M{auth_authen}\0"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"macro_value_without_nul", Packet('D', "Mi\0ABC"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"connect_no_nul", Packet('C', "host"), ErrorCode::kInvalidArgument},
        MalformedCase{"connect_no_family", Packet('C', "host\0"s), ErrorCode::kInvalidArgument},
        MalformedCase{"connect_bad_family", Packet('C', "host\0X\0\0addr\0"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"connect_no_port",
                      Packet('C',
                             "host\0"
                             "4\x01"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"connect_address_no_nul",
                      Packet('C',
                             "host\0"
                             "4\0\x19"
                             "1.2.3.4"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"connect_unknown_with_data", Packet('C', "host\0Ux"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"helo_no_nul", Packet('H', "mx"), ErrorCode::kInvalidArgument},
        MalformedCase{"helo_two_strings", Packet('H', "a\0b\0"s), ErrorCode::kInvalidArgument},
        MalformedCase{"mail_empty", Packet('M', ""), ErrorCode::kInvalidArgument},
        MalformedCase{"rcpt_no_nul", Packet('R', "<a@b>"), ErrorCode::kInvalidArgument},
        MalformedCase{"header_one_string", Packet('L', "Subject\0"s), ErrorCode::kInvalidArgument},
        MalformedCase{"header_value_no_nul", Packet('L', "Subject\0hi"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"header_three_strings", Packet('L', "a\0b\0c\0"s),
                      ErrorCode::kInvalidArgument},
        MalformedCase{"eoh_with_data", Packet('N', "x"), ErrorCode::kInvalidArgument},
        MalformedCase{"abort_with_data", Packet('A', "x"), ErrorCode::kInvalidArgument},
        MalformedCase{"quit_with_data", Packet('Q', "x"), ErrorCode::kInvalidArgument},
        MalformedCase{"unknown_smtp_no_nul", Packet('U', "XYZZY"), ErrorCode::kInvalidArgument}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

TEST(PacketDecoderTest, LimitCountsCommandByteAndData) {
  const std::string data(1023, 'x');  // 1 + 1023 = 1024: exactly the limit.
  auto at_limit = DecodeOne(Packet('B', data), 1024);
  ASSERT_TRUE(at_limit.has_value() && at_limit->has_value());
  auto over = DecodeOne(Packet('B', data + "x"), 1024);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
}

TEST(PacketDecoderTest, ResetClearsTheError) {
  PacketDecoder decoder(64);
  decoder.Feed(Packet('Z', ""));
  ASSERT_FALSE(decoder.Next().has_value());
  decoder.Reset();
  decoder.Feed(Packet('Q', ""));
  auto next = decoder.Next();
  ASSERT_TRUE(next.has_value() && next->has_value());
  EXPECT_TRUE(std::holds_alternative<Quit>(**next));
}

// Golden bytes: what the MTA reads.
TEST(ReplyEncoderTest, GoldenBytes) {
  EXPECT_EQ(Encode(ContinueReply()),
            "\0\0\0\x01"
            "c"s);
  EXPECT_EQ(Encode(AcceptReply()),
            "\0\0\0\x01"
            "a"s);
  EXPECT_EQ(Encode(RejectReply()),
            "\0\0\0\x01"
            "r"s);
  EXPECT_EQ(Encode(TempfailReply()),
            "\0\0\0\x01"
            "t"s);
  EXPECT_EQ(Encode(SkipReply()),
            "\0\0\0\x01"
            "s"s);
  EXPECT_EQ(Encode(ProgressReply()),
            "\0\0\0\x01"
            "p"s);
  EXPECT_EQ(Encode(OptionNegotiationReply(6, 0x31, 0x000ff0c3)),
            "\0\0\0\x0d"
            "O"
            "\0\0\0\x06"
            "\0\0\0\x31"
            "\0\x0f\xf0\xc3"s);
  EXPECT_EQ(Encode(ReplyCodeReply("550 5.7.1 spam")),
            "\0\0\0\x10"
            "y550 5.7.1 spam\0"s);
  EXPECT_EQ(Encode(AddHeaderReply("X-Spam-Flag", "YES")),
            "\0\0\0\x11"
            "hX-Spam-Flag\0YES\0"s);
  EXPECT_EQ(Encode(InsertHeaderReply(0, "X-A", "b")),
            "\0\0\0\x0b"
            "i\0\0\0\0X-A\0b\0"s);
  EXPECT_EQ(Encode(ChangeHeaderReply(2, "X-Spam-Flag", "")),
            "\0\0\0\x12"
            "m\0\0\0\x02X-Spam-Flag\0\0"s);
  EXPECT_EQ(Encode(QuarantineReply("spam")),
            "\0\0\0\x06"
            "qspam\0"s);
}

TEST(ReplyEncoderTest, AppendEncodedConcatenates) {
  std::string out;
  AppendEncoded(AddHeaderReply("A", "1"), out);
  AppendEncoded(ContinueReply(), out);
  EXPECT_EQ(out,
            "\0\0\0\x05"
            "hA\0"
            "1\0"
            "\0\0\0\x01"
            "c"s);
}

TEST(NamesTest, NameCodes) {
  EXPECT_EQ(CommandName(kCmdEndOfBody), "SMFIC_BODYEOB");
  EXPECT_EQ(ReplyName(kReplyReplyCode), "SMFIR_REPLYCODE");
  EXPECT_EQ(CommandName('Z'), "unknown command");
}

}  // namespace
}  // namespace nbspamd::milter
