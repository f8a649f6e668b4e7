// FrontEndThread: the I/O thread a protocol front end (milter, spamd) serves on, and the drain
// that stops it: the daemon's HTTP server keeps its own I/O context to itself.
//
//   FrontEndThread io("spamd");
//   auto listener = SpamdListener::Create(io.context(), ...);   // then listener->Run()
//   io.Start([] { /* count an exception that escaped a handler */ });
//   ...
//   listener->Stop();                                       // dispatched to the I/O thread
//   io.Drain(grace, [&] { return listener->OpenConnections(); });
//
// Thread safety: Start and Drain from one thread (the main one); context() from any.
#ifndef NBSPAMD_SERVER_FRONT_END_THREAD_H_
#define NBSPAMD_SERVER_FRONT_END_THREAD_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace nbspamd::server {

class FrontEndThread {
 public:
  // `name` is for log lines ("milter", "spamd").
  explicit FrontEndThread(std::string name) : name_(std::move(name)) {}
  FrontEndThread(const FrontEndThread&) = delete;
  FrontEndThread& operator=(const FrontEndThread&) = delete;
  ~FrontEndThread() {
    Drain(std::chrono::seconds(0), [] { return std::size_t{0}; });
  }

  [[nodiscard]] boost::asio::io_context& context() { return io_; }

  // Runs the context on a new thread until Drain. An exception escaping a handler, of whatever
  // type (a bug: the connections catch their own), is noted (common/handler_guard.h), passed to
  // `on_exception` and the thread runs on.
  void Start(std::function<void()> on_exception = {});

  // Exceptions that escaped a handler onto the thread.
  [[nodiscard]] std::uint64_t Escaped() const { return escaped_.load(); }

  // Call after the listener's Stop was dispatched: waits for the handlers already posted (that
  // Stop among them), then up to `grace` while `open_connections()` is not 0, then stops and
  // joins the thread and runs here whatever was still queued, so that the listener has closed
  // (and removed a Unix socket's file) for certain. Idempotent.
  void Drain(std::chrono::seconds grace, const std::function<std::size_t()>& open_connections);

 private:
  std::string name_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::atomic<std::uint64_t> escaped_ = 0;
  std::thread thread_;
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_FRONT_END_THREAD_H_
