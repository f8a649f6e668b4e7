// HttpListener: accepts connections and starts an HttpConnection for each: plain HTTP, or HTTPS
// when given a TLS context (http_api/tls_context.h).
#ifndef NBSPAMD_HTTP_API_LISTENER_H_
#define NBSPAMD_HTTP_API_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <expected>
#include <memory>

#include "common/error.h"
#include "common/incident.h"
#include "http_api/connection_registry.h"
#include "http_api/http_limits.h"
#include "http_api/router.h"

namespace nbspamd::http_api {

class HttpListener : public std::enable_shared_from_this<HttpListener> {
 public:
  // Binds and listens on `endpoint`; with `tls`, every connection speaks TLS with its
  // certificate. Errors: kUnavailable naming the address and the reason (in use, permission
  // denied, no such address).
  [[nodiscard]] static std::expected<std::shared_ptr<HttpListener>, Error> Create(
      boost::asio::io_context& context, const boost::asio::ip::tcp::endpoint& endpoint,
      const Router& router, const HttpLimits& limits, HttpConnectionRegistry& registry,
      IncidentHook on_incident = {}, std::shared_ptr<boost::asio::ssl::context> tls = nullptr);

  // The bound address (with the real port when port 0 was asked for).
  [[nodiscard]] boost::asio::ip::tcp::endpoint LocalEndpoint() const;

  // Starts accepting. Stop closes the acceptor; both are thread-safe.
  void Run();
  void Stop();

 private:
  HttpListener(boost::asio::io_context& context, const Router& router, const HttpLimits& limits,
               HttpConnectionRegistry& registry, IncidentHook on_incident,
               std::shared_ptr<boost::asio::ssl::context> tls);
  void DoAccept();

  boost::asio::io_context& context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;  // Delays accepting again after a failed accept.
  const Router& router_;
  const HttpLimits& limits_;
  HttpConnectionRegistry& registry_;
  const IncidentHook on_incident_;                        // Failed accepts.
  const std::shared_ptr<boost::asio::ssl::context> tls_;  // Null: plain HTTP.
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_LISTENER_H_
