#include "server/front_end_thread.h"

#include <boost/asio/post.hpp>
#include <exception>
#include <future>
#include <memory>

#include "common/handler_guard.h"
#include "common/log.h"

namespace nbspamd::server {

void FrontEndThread::Start(std::function<void()> on_exception) {
  work_.emplace(io_.get_executor());
  thread_ =
      std::thread([this, on_exception = std::move(on_exception), where = name_ + " I/O thread"] {
        for (;;) {
          try {
            io_.run();
            return;
          } catch (...) {  // Whatever it is: noted, and the thread goes on serving.
            NoteHandlerException(where, "", escaped_);
            if (on_exception) {
              try {
                on_exception();
              } catch (...) {
                NoteHandlerException(where, "", escaped_);
              }
            }
          }
        }
      });
}

void FrontEndThread::Drain(std::chrono::seconds grace,
                           const std::function<std::size_t()>& open_connections) {
  if (!thread_.joinable()) return;
  // A handler posted now runs after those posted before (up to 10 s: a stuck thread is stopped
  // below all the same).
  auto reached = std::make_shared<std::promise<void>>();
  std::future<void> done = reached->get_future();
  boost::asio::post(io_, [reached] { reached->set_value(); });
  done.wait_for(std::chrono::seconds(10));
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (open_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (open_connections() > 0) {
    LogWarning(name_ + " connections still open after the shutdown timeout: closing them");
  }
  work_.reset();
  io_.stop();
  thread_.join();
  // What a busy strand queued after the barrier above (the listener's Stop) runs here.
  io_.restart();
  io_.poll();
}

}  // namespace nbspamd::server
