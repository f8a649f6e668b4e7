// A relative-error check for the golden numbers of the model's tests.
#ifndef NBSPAMD_TESTS_SUPPORT_EXPECT_RELATIVE_H_
#define NBSPAMD_TESTS_SUPPORT_EXPECT_RELATIVE_H_

#include <gtest/gtest.h>

#include <cmath>

namespace nbspamd::test_support {

// Expects `actual` within a relative 1e-9 of `exact` (hand-computed golden numbers).
inline void ExpectRelative(double actual, double exact) {
  EXPECT_NEAR(actual, exact, 1e-9 * std::fabs(exact));
}

}  // namespace nbspamd::test_support

#endif  // NBSPAMD_TESTS_SUPPORT_EXPECT_RELATIVE_H_
