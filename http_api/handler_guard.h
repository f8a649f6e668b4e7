// Exceptions must never escape an Asio handler: they are for start-up and bugs, and one thrown
// from a handler would unwind through io_context::run() and end the process. Two nets catch them:
//
// - GuardStep, at the session boundary: a connection's step that throws is logged and counted,
//   and the caller closes that connection only.
// - RunIoContext, around io_context::run() on each I/O thread: whatever still escapes a handler
//   (the listener's, the shutdown timers') is logged and counted, and the thread goes on serving.
//   Asio leaves the io_context usable after a handler threw: run() may be called again without
//   restart().
//
//   std::atomic<std::uint64_t> escaped = 0;
//   RunIoContext(context, escaped);  // Returns when the context runs out of work or stops.
#ifndef NBSPAMD_HTTP_API_HANDLER_GUARD_H_
#define NBSPAMD_HTTP_API_HANDLER_GUARD_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <string_view>

namespace nbspamd::http_api {

// Notes an exception caught at `where` ("http session", "I/O thread"): adds one to `count` and
// logs it at error level with `request_id` when not empty (at most one line every 10 s, saying
// how many were held back, so that a bug every request meets cannot flood the log).
// REQUIRES: called inside a catch block. Never throws.
void NoteHandlerException(std::string_view where, std::string_view request_id,
                          std::atomic<std::uint64_t>& count) noexcept;

// Runs `step()`. When it throws, notes the exception (NoteHandlerException) and returns false;
// true when it returned normally. Never throws.
template <class Step>
[[nodiscard]] bool GuardStep(std::string_view where, std::string_view request_id,
                             std::atomic<std::uint64_t>& count, Step&& step) noexcept {
  try {
    step();
    return true;
  } catch (...) {
    NoteHandlerException(where, request_id, count);
    return false;
  }
}

// Runs `context` on the calling thread until run() returns normally (no work left, or stop()).
// Each exception that escapes a handler is noted (NoteHandlerException, counted in `escaped`) and
// the thread runs the context again.
void RunIoContext(boost::asio::io_context& context, std::atomic<std::uint64_t>& escaped) noexcept;

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_HANDLER_GUARD_H_
