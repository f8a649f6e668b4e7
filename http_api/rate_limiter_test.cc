#include "http_api/rate_limiter.h"

#include <gtest/gtest.h>

namespace nbspamd::http_api {
namespace {

using namespace std::chrono_literals;

TEST(RateLimiterTest, ABurstOfOneSecondThenTheRate) {
  RateLimiter limiter(4);
  const RateLimiter::Clock::time_point start{};
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(limiter.Allow("mx1", start)) << i;
  EXPECT_FALSE(limiter.Allow("mx1", start));
  EXPECT_FALSE(limiter.Allow("mx1", start + 200ms));  // 0.8 of a request refilled.
  EXPECT_TRUE(limiter.Allow("mx1", start + 250ms));
  EXPECT_FALSE(limiter.Allow("mx1", start + 250ms));
  // The bucket never holds more than the burst.
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(limiter.Allow("mx1", start + 100s)) << i;
  EXPECT_FALSE(limiter.Allow("mx1", start + 100s));
}

TEST(RateLimiterTest, SourcesHaveTheirOwnBuckets) {
  RateLimiter limiter(1);
  const RateLimiter::Clock::time_point start{};
  EXPECT_TRUE(limiter.Allow("a", start));
  EXPECT_FALSE(limiter.Allow("a", start));
  EXPECT_TRUE(limiter.Allow("b", start));
  EXPECT_TRUE(limiter.Allow("", start));
}

TEST(RateLimiterTest, ZeroMeansNoLimit) {
  RateLimiter limiter(0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Allow("a", {}));
}

TEST(RateLimiterTest, BelowOnePerSecondStillAllowsOneRequest) {
  RateLimiter limiter(0.5);
  const RateLimiter::Clock::time_point start{};
  EXPECT_TRUE(limiter.Allow("a", start));
  EXPECT_FALSE(limiter.Allow("a", start + 1s));
  EXPECT_TRUE(limiter.Allow("a", start + 2s));
}

}  // namespace
}  // namespace nbspamd::http_api
