// HttpListener: accepts connections and starts an HttpConnection for each: plain HTTP, or HTTPS
// when given a TLS context (http_server/tls_context.h).
#ifndef NBSPAMD_HTTP_SERVER_LISTENER_H_
#define NBSPAMD_HTTP_SERVER_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <expected>
#include <functional>
#include <memory>

#include "common/error.h"
#include "common/incident.h"
#include "http_api/http_limits.h"
#include "http_api/router.h"
#include "http_server/connection_registry.h"

namespace nbspamd::http_server {

class HttpListener : public std::enable_shared_from_this<HttpListener> {
 public:
  // Binds and listens on `endpoint`; with `tls`, every connection speaks TLS with its
  // certificate. Errors: kUnavailable naming the address and the reason (in use, permission
  // denied, no such address).
  [[nodiscard]] static std::expected<std::shared_ptr<HttpListener>, Error> Create(
      boost::asio::io_context& context, const boost::asio::ip::tcp::endpoint& endpoint,
      const http_api::Router& router, const http_api::HttpLimits& limits,
      HttpConnectionRegistry& registry, IncidentHook on_incident = {},
      std::shared_ptr<boost::asio::ssl::context> tls = nullptr);

  // The bound address (with the real port when port 0 was asked for).
  [[nodiscard]] boost::asio::ip::tcp::endpoint LocalEndpoint() const;

  // A seam for tests: runs for each accepted connection before it is set up, where a fault of
  // the set-up (out of memory, a socket option refused) would strike; what it throws is handled
  // as such a fault (dropped, noted and counted; accepting goes on). Call before Run.
  void SetAcceptHook(std::function<void()> hook) { accept_hook_ = std::move(hook); }

  // Starts accepting. Stop closes the acceptor; both are thread-safe.
  void Run();
  void Stop();

 private:
  HttpListener(boost::asio::io_context& context, const http_api::Router& router,
               const http_api::HttpLimits& limits, HttpConnectionRegistry& registry,
               IncidentHook on_incident, std::shared_ptr<boost::asio::ssl::context> tls);
  void DoAccept();

  boost::asio::io_context& context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;  // Delays accepting again after a failed accept.
  const http_api::Router& router_;
  const http_api::HttpLimits& limits_;
  HttpConnectionRegistry& registry_;
  const IncidentHook on_incident_;                        // Failed accepts.
  const std::shared_ptr<boost::asio::ssl::context> tls_;  // Null: plain HTTP.
  std::function<void()> accept_hook_;
};

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_LISTENER_H_
