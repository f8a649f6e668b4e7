// What GET /activity says the daemon classified over the last hour, summed over its minutes and
// verdicts: the figure a test compares with the scans it sent through a front end.
#ifndef NBSPAMD_TESTS_SUPPORT_ACTIVITY_H_
#define NBSPAMD_TESTS_SUPPORT_ACTIVITY_H_

#include <cstdint>

#include "tests/support/http_client.h"

namespace nbspamd::testing {

[[nodiscard]] std::int64_t ClassifiedLastHour(HttpClient& client);

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_ACTIVITY_H_
