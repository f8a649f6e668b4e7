#include "milter/address.h"

#include <gtest/gtest.h>

namespace nbspamd::milter {
namespace {

TEST(MilterAddressTest, ParsesPostfixNotation) {
  auto inet = ParseMilterAddress("inet:127.0.0.1:8891");
  ASSERT_TRUE(inet.has_value()) << inet.error().message;
  EXPECT_EQ(inet->kind, MilterAddress::Kind::kTcp);
  EXPECT_EQ(inet->host, "127.0.0.1");
  EXPECT_EQ(inet->port, 8891);
  EXPECT_EQ(FormatMilterAddress(*inet), "inet:127.0.0.1:8891");

  auto bare = ParseMilterAddress("localhost:0");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->host, "127.0.0.1");
  EXPECT_EQ(bare->port, 0);

  auto v6 = ParseMilterAddress("inet:[::1]:25");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(FormatMilterAddress(*v6), "inet:[::1]:25");

  auto unix_socket = ParseMilterAddress("unix:/run/nbspamd/milter.sock");
  ASSERT_TRUE(unix_socket.has_value());
  EXPECT_EQ(unix_socket->kind, MilterAddress::Kind::kUnix);
  EXPECT_EQ(unix_socket->path, "/run/nbspamd/milter.sock");
  EXPECT_EQ(FormatMilterAddress(*unix_socket), "unix:/run/nbspamd/milter.sock");
  EXPECT_TRUE(ParseMilterAddress("local:/tmp/m").has_value());
}

TEST(MilterAddressTest, RejectsWhatCannotBeListenedOn) {
  for (const char* bad :
       {"", "inet:127.0.0.1", "inet:127.0.0.1:65536", "inet:127.0.0.1:x",
        "inet:mail.example.org:25", "unix:relative/path", "unix:", "127.0.0.1:-1"}) {
    auto parsed = ParseMilterAddress(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(ParseMilterAddress("unix:/" + std::string(200, 'a')).has_value());
}

}  // namespace
}  // namespace nbspamd::milter
