#include "replication/cluster.h"

#include <gtest/gtest.h>

namespace nbspamd::replication {
namespace {

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
