// Exceptions must never escape an Asio handler or a worker's task: they are for start-up and
// bugs, and one thrown there would unwind through io_context::run() or a thread pool and end the
// process. Every front end (HTTP, milter, spamd) and its adapter to the core uses these nets, and
// each reports what it caught the same way (NoteHandlerException: counted, logged, throttled):
//
// - GuardStep, at the connection boundary: a connection's step that throws is logged and counted,
//   and the caller closes that connection only.
// - RunAndAnswer, around the work an adapter runs for a request (a classification on a worker):
//   whatever the work throws becomes an kInternal error, and the request is answered exactly
//   once; an exception from the answer itself is noted, never rethrown.
// - AnswerOnce, for an answer that an asynchronous call may give later or never take: the first
//   call answers, later ones are no-ops, and a throwing answer is noted.
// - RunIoContext, around io_context::run() on each I/O thread: whatever still escapes a handler
//   (the listener's, the shutdown timers') is logged and counted, and the thread goes on serving.
//   Asio leaves the io_context usable after a handler threw: run() may be called again without
//   restart().
//
//   std::atomic<std::uint64_t> escaped = 0;
//   RunIoContext(context, escaped);  // Returns when the context runs out of work or stops.
//   RunAndAnswer("milter classify", escaped, [&] { return Classify(message); }, std::move(done));
#ifndef NBSPAMD_COMMON_HANDLER_GUARD_H_
#define NBSPAMD_COMMON_HANDLER_GUARD_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/error.h"
#include "common/log.h"

namespace nbspamd {

// Notes an exception caught at `where` ("http connection", "I/O thread"): adds one to `count` and
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

// Runs `work()` (which returns a std::expected<T, Error>) and calls `done` with its result,
// exactly once. An exception from `work` is noted at `where` and answered as kInternal with its
// description; an exception from `done` is noted. Never throws.
template <class Work, class Done>
void RunAndAnswer(std::string_view where, std::atomic<std::uint64_t>& count, Work&& work,
                  Done&& done) noexcept {
  using Result = std::invoke_result_t<Work&>;
  std::optional<Result> result;
  try {
    result.emplace(work());
  } catch (...) {
    NoteHandlerException(where, "", count);
    try {
      result.emplace(std::unexpected(Error{ErrorCode::kInternal, DescribeCurrentException()}));
    } catch (...) {  // Out of memory for the description: the code alone still answers.
      result.emplace(std::unexpected(Error{ErrorCode::kInternal, std::string()}));
    }
  }
  try {
    done(std::move(*result));
  } catch (...) {
    NoteHandlerException(where, "", count);
  }
}

// An answer (a callable taking one argument) that runs at most once: the first call passes its
// argument on, any later call does nothing, and an exception from the answer is noted at `where`
// in `count`. Thread-safe. `count` must outlive every copy of this; share one with a
// std::shared_ptr to hand it to code that may or may not call it.
template <class Answer>
class AnswerOnce {
 public:
  AnswerOnce(std::string_view where, std::atomic<std::uint64_t>& count, Answer answer)
      : where_(where), count_(count), answer_(std::move(answer)) {}

  // True when this call answered (the first one), false when an earlier call had.
  template <class Value>
  bool operator()(Value&& value) noexcept {
    if (answered_.exchange(true)) return false;
    try {
      answer_(std::forward<Value>(value));
    } catch (...) {
      NoteHandlerException(where_, "", count_);
    }
    return true;
  }
  [[nodiscard]] bool answered() const { return answered_.load(); }

 private:
  const std::string_view where_;  // A string literal's: it outlives this.
  std::atomic<std::uint64_t>& count_;
  Answer answer_;
  std::atomic<bool> answered_ = false;
};

// Runs `context` on the calling thread until run() returns normally (no work left, or stop()).
// Each exception that escapes a handler is noted (NoteHandlerException, counted in `escaped`) and
// the thread runs the context again.
void RunIoContext(boost::asio::io_context& context, std::atomic<std::uint64_t>& escaped) noexcept;

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_HANDLER_GUARD_H_
