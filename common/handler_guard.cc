#include "common/handler_guard.h"

#include <string>

#include "common/log.h"
#include "common/log_throttle.h"

namespace nbspamd {

void NoteHandlerException(std::string_view where, std::string_view request_id,
                          std::atomic<std::uint64_t>& count) noexcept {
  count.fetch_add(1, std::memory_order_relaxed);
  // A bug that every request meets must not flood the log: the count says how often.
  static LogThrottle throttle(std::chrono::seconds(10));
  try {
    const auto held_back = throttle.Admit();
    if (!held_back) return;
    const std::string what = DescribeCurrentException();
    const std::string suppressed = std::to_string(*held_back);
    if (request_id.empty()) {
      LogError("exception in a handler",
               {{"where", where}, {"what", what}, {"suppressed", suppressed}});
    } else {
      LogError("exception in a handler", {{"where", where},
                                          {"request_id", request_id},
                                          {"what", what},
                                          {"suppressed", suppressed}});
    }
  } catch (...) {
    // Out of memory while logging: the count above still tells.
  }
}

void RunIoContext(boost::asio::io_context& context, std::atomic<std::uint64_t>& escaped) noexcept {
  while (true) {
    try {
      context.run();
      return;
    } catch (...) {
      NoteHandlerException("I/O thread", "", escaped);
    }
  }
}

}  // namespace nbspamd
