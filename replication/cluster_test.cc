#include "replication/cluster.h"

#include <gtest/gtest.h>

namespace nbspamd::replication {
namespace {

TEST(HostPortListTest, ParsesSentinelAddresses) {
  const auto list = ParseHostPortList("10.0.0.1:26379, sentinel-2:26380 ,::1:26381");
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].host, "10.0.0.1");
  EXPECT_EQ((*list)[0].port, 26379);
  EXPECT_EQ((*list)[1].host, "sentinel-2");
  EXPECT_EQ((*list)[1].port, 26380);
  EXPECT_EQ((*list)[2].host, "::1");
  EXPECT_EQ((*list)[2].port, 26381);
  EXPECT_FALSE(ParseHostPortList("").has_value());
  EXPECT_FALSE(ParseHostPortList("10.0.0.1").has_value());
  EXPECT_FALSE(ParseHostPortList("10.0.0.1:26379,").has_value());
  EXPECT_FALSE(ParseHostPortList("10.0.0.1:65536").has_value());
  EXPECT_FALSE(ParseHostPortList(":26379").has_value());
}

// No sentinel answers: kUnavailable, naming each one tried.
TEST(HostPortListTest, AskingSentinelsThatDoNotAnswerIsUnavailable) {
  RedisTarget target;
  target.sentinels = {{"127.0.0.1", 1}, {"127.0.0.1", 2}};
  const auto primary = AskSentinels(target, std::chrono::milliseconds(500));
  ASSERT_FALSE(primary.has_value());
  EXPECT_EQ(primary.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(primary.error().message.find("127.0.0.1:1"), std::string::npos);
  EXPECT_NE(primary.error().message.find("127.0.0.1:2"), std::string::npos);
}

TEST(StreamEventTest, LearnRoundTrips) {
  StreamEvent event;
  event.id = "<m1@example.org>";
  event.label = "spam";
  event.tokens = {{1, 2}, {0xfedcba9876543210ULL, 1}};
  event.origin = {"mx1", 1700000000};
  event.waiter = "d1/42/7";
  const auto decoded = DecodeStreamEvent(EncodeStreamEvent(event));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded, event);
}

TEST(StreamEventTest, ForgetRoundTripsWithAndWithoutSource) {
  StreamEvent forget;
  forget.kind = StreamEvent::Kind::kForget;
  forget.id = "m2";
  auto decoded = DecodeStreamEvent(EncodeStreamEvent(forget));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded, forget);
  forget.only_source = "";
  decoded = DecodeStreamEvent(EncodeStreamEvent(forget));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded, forget);
}

TEST(StreamEventTest, DamagedEventsAreDataLoss) {
  StreamEvent event;
  event.id = "m";
  event.label = "ham";
  event.tokens = {{5, 1}};
  const std::string bytes = EncodeStreamEvent(event);
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const auto decoded = DecodeStreamEvent(bytes.substr(0, size));
    ASSERT_FALSE(decoded.has_value()) << size;
    EXPECT_EQ(decoded.error().code, ErrorCode::kDataLoss);
  }
  std::string other_version = bytes;
  other_version[0] = 9;
  EXPECT_EQ(DecodeStreamEvent(other_version).error().code, ErrorCode::kDataLoss);
  StreamEvent without_id;
  without_id.kind = StreamEvent::Kind::kForget;
  EXPECT_EQ(DecodeStreamEvent(EncodeStreamEvent(without_id)).error().code, ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace nbspamd::replication
