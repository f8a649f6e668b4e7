#include "common/log_throttle.h"

#include <gtest/gtest.h>

namespace nbspamd {
namespace {

using namespace std::chrono_literals;

TEST(LogThrottleTest, TheFirstEventThenOnePerIntervalWithTheCountHeldBack) {
  LogThrottle throttle(60s);
  const LogThrottle::Clock::time_point start{};
  EXPECT_EQ(throttle.Admit(start), 0u);
  EXPECT_EQ(throttle.Admit(start + 1s), std::nullopt);
  EXPECT_EQ(throttle.Admit(start + 59s), std::nullopt);
  EXPECT_EQ(throttle.Admit(start + 60s), 2u);
  EXPECT_EQ(throttle.Admit(start + 61s), std::nullopt);
  // After a quiet spell the next event is logged at once, saying what was held back.
  EXPECT_EQ(throttle.Admit(start + 1h), 1u);
  EXPECT_EQ(throttle.Admit(start + 2h), 0u);
}

}  // namespace
}  // namespace nbspamd
