#include "spamd/request.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

namespace nbspamd::spamd {
namespace {

constexpr std::string_view kMessage = "Subject: hi\r\n\r\nhello\r\n";

SpamdLimits SmallLimits() {
  SpamdLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 4096;
  return limits;
}

// Feeds `input` in one piece, then (when `eof`) ends the input.
SpamdRequestParser Parse(std::string_view input, bool eof, SpamdLimits limits = SmallLimits()) {
  SpamdRequestParser parser(limits);
  parser.Feed(input);
  if (eof) parser.Finish();
  return parser;
}

std::string Compress(std::string_view data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(out.data()), &size,
                     reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size())),
            Z_OK);
  out.resize(size);
  return out;
}

TEST(SpamdRequestParser, ParsesWhatSpamcSends) {
  const std::string input =
      "CHECK SPAMC/1.5\r\nUser: alice\r\nContent-length: " + std::to_string(kMessage.size()) +
      "\r\n\r\n" + std::string(kMessage);
  SpamdRequestParser parser = Parse(input, /*eof=*/false);
  ASSERT_EQ(parser.status(), ParseStatus::kComplete);
  const SpamdRequest& request = parser.request();
  EXPECT_EQ(request.command, SpamdCommand::kCheck);
  EXPECT_EQ(request.version_minor, 5);
  EXPECT_EQ(request.user, "alice");
  EXPECT_EQ(request.content_length, kMessage.size());
  EXPECT_EQ(request.body, kMessage);
}

TEST(SpamdRequestParser, ByteByByteGivesTheSameRequest) {
  const std::string input =
      "TELL SPAMC/1.5\r\nMessage-class: ham\r\nSet: local\r\nUser: bob\r\n"
      "Content-length: " +
      std::to_string(kMessage.size()) + "\r\n\r\n" + std::string(kMessage);
  SpamdRequestParser parser(SmallLimits());
  ParseStatus status = ParseStatus::kNeedMore;
  bool saw_headers_before_body = false;
  for (std::size_t i = 0; i < input.size(); ++i) {
    EXPECT_EQ(status, ParseStatus::kNeedMore) << "complete early, at byte " << i;
    status = parser.Feed(input.substr(i, 1));
    if (parser.headers_done() && status == ParseStatus::kNeedMore) saw_headers_before_body = true;
  }
  ASSERT_EQ(status, ParseStatus::kComplete);
  EXPECT_TRUE(saw_headers_before_body);
  const SpamdRequest& request = parser.request();
  EXPECT_EQ(request.command, SpamdCommand::kTell);
  EXPECT_EQ(request.message_class, SpamdLabel::kHam);
  EXPECT_TRUE(request.set_local);
  EXPECT_FALSE(request.remove_local);
  EXPECT_EQ(request.user, "bob");
  EXPECT_EQ(request.body, kMessage);
}

TEST(SpamdRequestParser, PingAndSkip) {
  // Protocol 1.5 ends PING with a blank line; earlier versions with the request line.
  SpamdRequestParser ping15 = Parse("PING SPAMC/1.5\r\n", false);
  EXPECT_EQ(ping15.status(), ParseStatus::kNeedMore);
  EXPECT_EQ(ping15.Feed("\r\n"), ParseStatus::kComplete);
  EXPECT_EQ(ping15.request().command, SpamdCommand::kPing);
  SpamdRequestParser ping12 = Parse("PING SPAMC/1.2\r\n", false);
  EXPECT_EQ(ping12.status(), ParseStatus::kComplete);
  SpamdRequestParser skip = Parse("SKIP SPAMC/1.5\r\nContent-length: 5\r\n\r\n", false);
  EXPECT_EQ(skip.status(), ParseStatus::kComplete);
  EXPECT_EQ(skip.request().command, SpamdCommand::kSkip);
}

TEST(SpamdRequestParser, BareLineFeedsAndHeaderNamesInAnyCase) {
  SpamdRequestParser parser =
      Parse("PROCESS SPAMC/1.3\ncontent-LENGTH:5\nuser:   carol  \n\nhello", false);
  ASSERT_EQ(parser.status(), ParseStatus::kComplete);
  EXPECT_EQ(parser.request().user, "carol");
  EXPECT_EQ(parser.request().body, "hello");
}

TEST(SpamdRequestParser, BodyWithoutContentLengthRunsToTheEndOfInput) {
  SpamdRequestParser v15 = Parse("SYMBOLS SPAMC/1.5\r\n\r\nhello", false);
  EXPECT_EQ(v15.status(), ParseStatus::kNeedMore);
  EXPECT_EQ(v15.Finish(), ParseStatus::kComplete);
  EXPECT_EQ(v15.request().body, "hello");
  // SPAMC/1.0 has no headers at all.
  SpamdRequestParser v10 = Parse("CHECK SPAMC/1.0\r\nSubject: x\r\n\r\nbody", true);
  ASSERT_EQ(v10.status(), ParseStatus::kComplete);
  EXPECT_EQ(v10.request().body, "Subject: x\r\n\r\nbody");
}

TEST(SpamdRequestParser, BytesAfterTheBodyAreIgnored) {
  SpamdRequestParser parser = Parse("CHECK SPAMC/1.5\r\nContent-length: 3\r\n\r\nabcdef", false);
  ASSERT_EQ(parser.status(), ParseStatus::kComplete);
  EXPECT_EQ(parser.request().body, "abc");
  EXPECT_EQ(parser.Feed("more"), ParseStatus::kComplete);
  EXPECT_EQ(parser.request().body, "abc");
}

TEST(SpamdRequestParser, InflatesZlibBodies) {
  const std::string compressed = Compress(kMessage);
  SpamdRequestParser parser = Parse("CHECK SPAMC/1.5\r\nCompress: zlib\r\nContent-length: " +
                                        std::to_string(compressed.size()) + "\r\n\r\n" + compressed,
                                    false);
  ASSERT_EQ(parser.status(), ParseStatus::kComplete);
  EXPECT_TRUE(parser.request().compressed);
  EXPECT_EQ(parser.request().body, kMessage);
}

TEST(SpamdRequestParser, ZlibBombIsRefusedAtTheBodyLimit) {
  const std::string compressed = Compress(std::string(1 << 20, 'a'));  // 1 MiB of 'a'.
  ASSERT_LT(compressed.size(), SmallLimits().max_body_bytes);
  SpamdRequestParser parser = Parse("CHECK SPAMC/1.5\r\nCompress: zlib\r\nContent-length: " +
                                        std::to_string(compressed.size()) + "\r\n\r\n" + compressed,
                                    false);
  ASSERT_EQ(parser.status(), ParseStatus::kFailed);
  EXPECT_EQ(parser.failure().status, SpamdStatus::kDataErr);
}

struct Malformed {
  std::string name;
  std::string input;
  bool eof;  // The client closes its sending side after the input.
  SpamdStatus status;
};

class SpamdRequestMalformed : public testing::TestWithParam<Malformed> {};

TEST_P(SpamdRequestMalformed, FailsWithTheProtocolError) {
  const Malformed& test = GetParam();
  SpamdRequestParser parser = Parse(test.input, test.eof);
  ASSERT_EQ(parser.status(), ParseStatus::kFailed) << test.name;
  EXPECT_EQ(parser.failure().status, test.status) << test.name << ": " << parser.failure().message;
  EXPECT_FALSE(parser.failure().message.empty());
  // A failed parser stays failed.
  EXPECT_EQ(parser.Feed("CHECK SPAMC/1.5\r\n\r\n"), ParseStatus::kFailed);
}

std::string ManyHeaders(std::size_t count) {
  std::string input = "CHECK SPAMC/1.5\r\n";
  for (std::size_t i = 0; i < count; ++i) input += "X:\r\n";
  return input + "\r\n";
}

INSTANTIATE_TEST_SUITE_P(
    Table, SpamdRequestMalformed,
    testing::Values(
        Malformed{"nothing", "", true, SpamdStatus::kProtocol},
        Malformed{"truncated request line", "CHECK SPAM", true, SpamdStatus::kProtocol},
        Malformed{"truncated headers", "CHECK SPAMC/1.5\r\nContent-length: 5\r\n", true,
                  SpamdStatus::kProtocol},
        Malformed{"missing body", "CHECK SPAMC/1.5\r\nContent-length: 10\r\n\r\n", true,
                  SpamdStatus::kProtocol},
        Malformed{"short body", "CHECK SPAMC/1.5\r\nContent-length: 10\r\n\r\nabc", true,
                  SpamdStatus::kProtocol},
        Malformed{"absurd Content-length",
                  "CHECK SPAMC/1.5\r\nContent-length: 99999999999999999999999999\r\n\r\n", false,
                  SpamdStatus::kDataErr},
        Malformed{"Content-length over the limit",
                  "CHECK SPAMC/1.5\r\nContent-length: 4097\r\n\r\n", false, SpamdStatus::kDataErr},
        Malformed{"body to end of input over the limit",
                  "CHECK SPAMC/1.5\r\n\r\n" + std::string(5000, 'x'), false, SpamdStatus::kDataErr},
        Malformed{"negative Content-length", "CHECK SPAMC/1.5\r\nContent-length: -1\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"Content-length with letters", "CHECK SPAMC/1.5\r\nContent-length: 12abc\r\n\r\n",
                  false, SpamdStatus::kProtocol},
        Malformed{"empty Content-length", "CHECK SPAMC/1.5\r\nContent-length:\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"two different Content-lengths",
                  "CHECK SPAMC/1.5\r\nContent-length: 1\r\nContent-length: 2\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"unknown command", "FROB SPAMC/1.5\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"lower-case command", "check SPAMC/1.5\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"HTTP request", "GET / HTTP/1.1\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"no version", "CHECK\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"bad version", "CHECK SPAMC/2.0\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"long version", "CHECK SPAMC/1.55\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"not SPAMC", "CHECK HTTP/1.5\r\n\r\n", false, SpamdStatus::kProtocol},
        Malformed{"blank request line", "\r\n", false, SpamdStatus::kProtocol},
        Malformed{"header without colon", "CHECK SPAMC/1.5\r\nNoColonHere\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"User with a control character", "CHECK SPAMC/1.5\r\nUser: a\x01z\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"User too long", "CHECK SPAMC/1.5\r\nUser: " + std::string(300, 'u') + "\r\n",
                  false, SpamdStatus::kProtocol},
        Malformed{"gzip", "CHECK SPAMC/1.5\r\nCompress: gzip\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"zlib without Content-length", "CHECK SPAMC/1.5\r\nCompress: zlib\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"zlib that is not zlib",
                  "CHECK SPAMC/1.5\r\nCompress: zlib\r\nContent-length: 5\r\n\r\nhello", false,
                  SpamdStatus::kDataErr},
        Malformed{"invalid Message-class", "TELL SPAMC/1.5\r\nMessage-class: eggs\r\n\r\n", false,
                  SpamdStatus::kProtocol},
        Malformed{"set and remove local",
                  "TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nRemove: local\r\n"
                  "Content-length: 1\r\n\r\nx",
                  false, SpamdStatus::kProtocol},
        Malformed{"set local without a class",
                  "TELL SPAMC/1.5\r\nSet: local\r\nContent-length: 1\r\n\r\nx", false,
                  SpamdStatus::kProtocol},
        Malformed{"too many headers", ManyHeaders(kMaxHeaderLines + 1), false,
                  SpamdStatus::kProtocol},
        Malformed{"endless request line", std::string(2000, 'C'), false, SpamdStatus::kProtocol},
        Malformed{"headers over the limit",
                  "CHECK SPAMC/1.5\r\nX: " + std::string(1100, 'h') + "\r\n\r\n", false,
                  SpamdStatus::kProtocol}),
    [](const testing::TestParamInfo<Malformed>& info) {
      std::string name;
      for (const char c : info.param.name)
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

TEST(SpamdRequestParser, ManyHeadersUpToTheLimitAreFine) {
  SpamdLimits limits = SmallLimits();
  limits.max_header_bytes = 16 << 10;
  SpamdRequestParser parser = Parse(ManyHeaders(kMaxHeaderLines), true, limits);
  EXPECT_EQ(parser.status(), ParseStatus::kComplete);
}

TEST(InflateZlib, RefusesTruncatedData) {
  std::string compressed = Compress(std::string(10000, 'q'));
  compressed.resize(compressed.size() / 2);
  const auto inflated = InflateZlib(compressed, 1 << 20);
  ASSERT_FALSE(inflated.has_value());
  EXPECT_EQ(inflated.error().status, SpamdStatus::kDataErr);
}

}  // namespace
}  // namespace nbspamd::spamd
