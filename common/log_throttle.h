// LogThrottle: keeps a failure that repeats from flooding the log. The first event is logged,
// then at most one per interval, and the line that is logged says how many were held back.
//
//   LogThrottle throttle;  // One per kind of event.
//   if (const auto held_back = throttle.Admit()) {
//     LogWarning("cluster: reporting the position failed",
//                {{"error", message}, {"suppressed", std::to_string(*held_back)}});
//   }
//
// Thread-safe. Count events separately (a counter for /metrics): the throttle only decides
// which ones get a log line.
#ifndef NBSPAMD_COMMON_LOG_THROTTLE_H_
#define NBSPAMD_COMMON_LOG_THROTTLE_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace nbspamd {

class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogThrottle(Clock::duration interval = std::chrono::minutes(1)) : interval_(interval) {}
  LogThrottle(const LogThrottle&) = delete;
  LogThrottle& operator=(const LogThrottle&) = delete;

  // Notes an event at `now`. Returns how many events were held back since the last one admitted
  // (0 for the first) when this one is to be logged, nullopt when it is to be held back.
  [[nodiscard]] std::optional<std::uint64_t> Admit(Clock::time_point now = Clock::now());

 private:
  const Clock::duration interval_;
  std::mutex mutex_;
  std::optional<Clock::time_point> last_admitted_;  // Guarded by mutex_.
  std::uint64_t held_back_ = 0;                     // Guarded by mutex_.
};

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_LOG_THROTTLE_H_
