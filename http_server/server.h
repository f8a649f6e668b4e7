// Server: the HTTP daemon around a SpamFilter: a listener, a pool of I/O threads, and the
// graceful shutdown on SIGTERM or SIGINT (stop accepting, finish the requests in flight, close
// idle connections, then return so the caller can close the store).
#ifndef NBSPAMD_HTTP_SERVER_SERVER_H_
#define NBSPAMD_HTTP_SERVER_SERVER_H_

#include <signal.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/error.h"
#include "common/incident.h"
#include "core/spam_filter.h"
#include "http_api/http_limits.h"
#include "http_api/router.h"
#include "http_server/connection_registry.h"
#include "http_server/listener.h"

namespace nbspamd::http_server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // An IP address or a name that resolves locally.
  std::uint16_t port = 0;          // 0: any free port.
  unsigned threads = 1;            // I/O threads, >= 1.
  http_api::HttpLimits limits;
  // After a shutdown signal, connections still busy after this long are cut.
  std::chrono::seconds shutdown_timeout{30};
  http_api::RouterOptions router;  // Authentication, admission and backups.
  // Called once on the I/O thread that takes the first SIGTERM or SIGINT, right after the HTTP
  // listener stops: other front ends (the milter) begin their own drain there. Must not throw.
  std::function<void()> on_shutdown;
  // Called on an I/O thread for each SIGHUP (a reload of the settings: server/settings_reload.h);
  // unset: SIGHUP is only logged. SIGHUP never ends the daemon. Must not throw.
  std::function<void()> on_reload;
  // Failed accepts, for the daemon's log (common/incident.h). Unset: not reported.
  IncidentHook on_incident;
  // HTTPS with this context's certificate and key (MakeTlsContext); null: plain HTTP.
  std::shared_ptr<boost::asio::ssl::context> tls;
};

class Server {
 public:
  // Binds the listening socket. Errors: kUnavailable when the address cannot be bound or
  // resolved.
  [[nodiscard]] static std::expected<std::unique_ptr<Server>, Error> Create(
      core::SpamFilter& filter, const ServerOptions& options);

  // The router, for what changes while serving (a reload's train_rate_limit).
  [[nodiscard]] const http_api::Router& router() const { return router_; }

  // The address actually bound.
  [[nodiscard]] boost::asio::ip::tcp::endpoint LocalEndpoint() const;

  // Serves until SIGTERM or SIGINT and the drain that follows; returns when every connection is
  // closed and every I/O thread has stopped. The calling thread and the I/O threads unblock
  // ServedSignals(), so a caller can keep them blocked in all its other threads.
  void Run();

  // Counts feedback that came through another front end (a spamd TELL) in /metrics'
  // nbspamd_feedback_total, as feedback through /train is. Thread-safe.
  void RecordFeedback(core::Feedback feedback) { router_.metrics().RecordFeedback(feedback); }

  // From Create until here, SIGTERM and SIGINT are the server's (a further one during the drain
  // ends it early); from here on they are ignored, so that they cannot cut short what the
  // process does after serving, such as closing the model.
  ~Server();

 private:
  Server(core::SpamFilter& filter, const ServerOptions& options);
  void BeginShutdown();

  // Connections refer to options_, router_ and registry_, and may be destroyed with context_, so
  // those are declared (constructed) before it and destroyed after it.
  ServerOptions options_;
  http_api::Router router_;
  HttpConnectionRegistry registry_;
  boost::asio::io_context context_;
  std::shared_ptr<HttpListener> listener_;
  std::optional<boost::asio::signal_set> signals_;         // From Create on.
  std::optional<boost::asio::signal_set> reload_signals_;  // SIGHUP, from Create on.
  // SIGUSR1, SIGUSR2 and SIGPIPE, whose default action would end the process: noted and ignored.
  std::optional<boost::asio::signal_set> ignored_signals_;
};

// The signals a Server takes: SIGTERM and SIGINT (shutdown), SIGHUP (reload), SIGUSR1, SIGUSR2 and
// SIGPIPE (noted and ignored). A process blocks them in its first thread before it starts any
// other, so that every thread inherits the block and only Run's I/O threads, which unblock them,
// ever take one: a signal is then handled as soon as it comes, never left to a thread that is
// busy or asleep elsewhere, and one that comes before Run waits, pending, for it.
[[nodiscard]] sigset_t ServedSignals();

// "127.0.0.1:7830", or "[::1]:7830" for IPv6.
[[nodiscard]] std::string FormatEndpoint(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_SERVER_H_
