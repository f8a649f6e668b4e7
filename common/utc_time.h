// UtcTimeText: a Unix time as people read it in messages and logs, "2026-11-23T10:45:01Z"
// (RFC 3339, UTC, whole seconds). Thread-safe.
#ifndef NBSPAMD_COMMON_UTC_TIME_H_
#define NBSPAMD_COMMON_UTC_TIME_H_

#include <cstdint>
#include <string>

namespace nbspamd {

[[nodiscard]] std::string UtcTimeText(std::int64_t unix_seconds);

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_UTC_TIME_H_
