// Spans of time that tests with a clock seam share.
#ifndef NBSPAMD_TESTS_SUPPORT_TEST_TIME_H_
#define NBSPAMD_TESTS_SUPPORT_TEST_TIME_H_

#include <chrono>
#include <cstdint>

namespace nbspamd::test_support {

// A day, in the Unix seconds of a test clock.
inline constexpr std::int64_t kDay = 24 * 3600;

// An interval of a periodic task that no test waits for: the test runs each pass itself.
inline constexpr std::chrono::hours kNever(24 * 365);

}  // namespace nbspamd::test_support

#endif  // NBSPAMD_TESTS_SUPPORT_TEST_TIME_H_
