#include "http_server/server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <thread>
#include <vector>

#include "common/handler_guard.h"
#include "common/log.h"
#include "http_server/connection.h"

namespace nbspamd::http_server {

namespace net = boost::asio;
using net::ip::tcp;

sigset_t ServedSignals() {
  sigset_t served;
  sigemptyset(&served);
  for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE}) {
    sigaddset(&served, signal);
  }
  return served;
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  const std::string address = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + address + "]:" + port : address + ":" + port;
}

Server::Server(core::SpamFilter& filter, const ServerOptions& options)
    : options_(options),
      router_(filter, options.router),
      registry_(options.limits.max_in_flight_bytes),
      context_(static_cast<int>(options.threads)) {}

std::expected<std::unique_ptr<Server>, Error> Server::Create(core::SpamFilter& filter,
                                                             const ServerOptions& options) {
  std::unique_ptr<Server> server(new Server(filter, options));
  boost::system::error_code ec;
  tcp::endpoint endpoint(net::ip::make_address(options.host, ec), options.port);
  if (ec) {
    tcp::resolver resolver(server->context_);
    const auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
    if (ec || results.empty()) {
      return MakeError(ErrorCode::kUnavailable,
                       "cannot resolve listen address '" + options.host + "': " + ec.message());
    }
    endpoint = results.begin()->endpoint();
  }
  auto listener =
      HttpListener::Create(server->context_, endpoint, server->router_, server->options_.limits,
                           server->registry_, server->options_.on_incident, server->options_.tls);
  if (!listener) return std::unexpected(listener.error());
  server->listener_ = std::move(*listener);
  // Catch SIGTERM and SIGINT from now on: the caller announces that it listens once this
  // returns, and a signal that comes before Run() must still mean a graceful stop (Asio keeps
  // it until Run waits for it).
  server->signals_.emplace(server->context_, SIGINT, SIGTERM);
  // SIGHUP (logrotate, a closed terminal, systemctl reload) reloads instead of ending the process.
  server->reload_signals_.emplace(server->context_, SIGHUP);
  // No other signal but SIGTERM and SIGINT ends the daemon.
  server->ignored_signals_.emplace(server->context_, SIGUSR1, SIGUSR2, SIGPIPE);
  return server;
}

Server::~Server() {
  // Removing the signal set restores the default actions (termination): ignore at once instead.
  signals_.reset();
  reload_signals_.reset();
  ignored_signals_.reset();
  for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE}) {
    std::signal(signal, SIG_IGN);
  }
}

tcp::endpoint Server::LocalEndpoint() const { return listener_->LocalEndpoint(); }

void Server::Run() {
  net::signal_set& signals = *signals_;
  net::signal_set& reload_signals = *reload_signals_;
  std::function<void()> await_reload = [&] {
    reload_signals.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;  // Cancelled: shutting down.
      LogInfo("SIGHUP: reloading the settings");
      if (options_.on_reload) options_.on_reload();
      await_reload();
    });
  };
  await_reload();
  net::signal_set& ignored_signals = *ignored_signals_;
  std::function<void()> await_ignored = [&] {
    ignored_signals.async_wait([&](const boost::system::error_code& ec, int signal) {
      if (ec) return;  // Cancelled: shutting down.
      if (signal != SIGPIPE) {
        LogInfo("signal " + std::to_string(signal) +
                " ignored: SIGHUP reloads the settings, SIGTERM and SIGINT stop the daemon");
      }
      await_ignored();
    });
  };
  await_ignored();
  net::steady_timer deadline(context_);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    LogInfo("signal " + std::to_string(signal) + ": finishing requests in flight");
    listener_->Stop();
    if (options_.on_shutdown) options_.on_shutdown();
    // A second signal, or the deadline, cuts what is left.
    signals.async_wait([&](const boost::system::error_code& again, int) {
      if (!again) {
        LogWarning("second signal: stopping now");
        context_.stop();
      }
    });
    deadline.expires_after(options_.shutdown_timeout);
    deadline.async_wait([&](const boost::system::error_code& expired) {
      if (!expired) {
        LogWarning("shutdown timeout: closing the connections still open");
        context_.stop();
      }
    });
    registry_.BeginShutdown([&] {
      // The last connection is gone: release what keeps the I/O threads running.
      net::post(context_, [&] {
        boost::system::error_code ignored;
        signals.cancel(ignored);
        reload_signals.cancel(ignored);
        ignored_signals.cancel(ignored);
        deadline.cancel();
      });
    });
  });
  listener_->Run();

  // The I/O threads take the served signals (Asio's handler runs on whichever unblocked thread
  // the kernel picks), so that the caller may block them in every other thread.
  const sigset_t served = ServedSignals();
  const auto serve = [this, &served] {
    pthread_sigmask(SIG_UNBLOCK, &served, nullptr);
    // A handler that throws must not end the process: log it and go on serving.
    // Connections catch their own first (connection.h), so a count here is a bug outside any.
    RunIoContext(context_, router_.metrics().HandlerExceptions(http_api::InternalError::kIoThread));
  };
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < options_.threads; ++i) threads.emplace_back(serve);
  serve();
  for (std::thread& thread : threads) thread.join();
}

}  // namespace nbspamd::http_server
