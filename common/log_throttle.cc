#include "common/log_throttle.h"

namespace nbspamd {

std::optional<std::uint64_t> LogThrottle::Admit(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (last_admitted_ && now - *last_admitted_ < interval_) {
    ++held_back_;
    return std::nullopt;
  }
  last_admitted_ = now;
  const std::uint64_t held_back = held_back_;
  held_back_ = 0;
  return held_back;
}

}  // namespace nbspamd
