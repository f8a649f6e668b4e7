#include "common/utc_time.h"

#include <gtest/gtest.h>

namespace nbspamd {
namespace {

TEST(UtcTimeTest, WritesRfc3339InUtc) {
  EXPECT_EQ(UtcTimeText(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(UtcTimeText(1795430701), "2026-11-23T10:45:01Z");
}

}  // namespace
}  // namespace nbspamd
