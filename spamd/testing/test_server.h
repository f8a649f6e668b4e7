// SpamdTestServer: a SpamdListener on 127.0.0.1 and an ephemeral port, with two io_context
// threads of its own, for tests that run real clients (spamc, Exim) against it. The destructor
// stops the listener, waits until every connection has ended, and joins the threads.
// Thread safety: port() from any thread. Errors: the constructor throws std::runtime_error when
// the listener cannot bind (a test set-up failure).
#ifndef NBSPAMD_SPAMD_TESTING_TEST_SERVER_H_
#define NBSPAMD_SPAMD_TESTING_TEST_SERVER_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "spamd/listener.h"

namespace nbspamd::spamd {

class SpamdTestServer {
 public:
  // REQUIRES: `backend` outlives the server.
  SpamdTestServer(SpamdBackend& backend, SpamdOptions options) {
    namespace net = boost::asio;
    auto listener = SpamdListener::Create(context_, {net::ip::make_address("127.0.0.1"), 0},
                                          backend, std::move(options));
    if (!listener) throw std::runtime_error(listener.error().message);
    listener_ = *listener;
    listener_->Run();
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { context_.run(); });
  }
  SpamdTestServer(const SpamdTestServer&) = delete;
  SpamdTestServer& operator=(const SpamdTestServer&) = delete;
  ~SpamdTestServer() {
    std::promise<void> drained;
    listener_->Stop([&] { drained.set_value(); });
    drained.get_future().wait();
    guard_.reset();
    context_.stop();
    for (auto& thread : threads_) thread.join();
  }

  [[nodiscard]] unsigned short port() const { return listener_->LocalEndpoint().port(); }
  [[nodiscard]] SpamdListener& listener() { return *listener_; }

 private:
  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_ =
      boost::asio::make_work_guard(context_);
  std::vector<std::thread> threads_;
  std::shared_ptr<SpamdListener> listener_;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_TESTING_TEST_SERVER_H_
