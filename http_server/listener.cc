#include "http_server/listener.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>

#include "common/handler_guard.h"
#include "common/log.h"
#include "common/tcp_listen.h"
#include "http_server/connection.h"

namespace nbspamd::http_server {

namespace net = boost::asio;
using net::ip::tcp;

HttpListener::HttpListener(net::io_context& context, const http_api::Router& router,
                           const http_api::HttpLimits& limits, HttpConnectionRegistry& registry,
                           IncidentHook on_incident, std::shared_ptr<net::ssl::context> tls)
    : context_(context),
      acceptor_(net::make_strand(context)),
      retry_timer_(acceptor_.get_executor()),
      router_(router),
      limits_(limits),
      registry_(registry),
      on_incident_(std::move(on_incident)),
      tls_(std::move(tls)) {}

std::expected<std::shared_ptr<HttpListener>, Error> HttpListener::Create(
    net::io_context& context, const tcp::endpoint& endpoint, const http_api::Router& router,
    const http_api::HttpLimits& limits, HttpConnectionRegistry& registry, IncidentHook on_incident,
    std::shared_ptr<net::ssl::context> tls) {
  std::shared_ptr<HttpListener> listener(
      new HttpListener(context, router, limits, registry, std::move(on_incident), std::move(tls)));
  if (auto listening = ListenOn(listener->acceptor_, endpoint); !listening) {
    return std::unexpected(std::move(listening.error()));
  }
  return listener;
}

tcp::endpoint HttpListener::LocalEndpoint() const {
  boost::system::error_code ignored;
  return acceptor_.local_endpoint(ignored);
}

void HttpListener::Run() {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->DoAccept(); });
}

void HttpListener::Stop() {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
    self->retry_timer_.cancel();
  });
}

void HttpListener::DoAccept() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept(net::make_strand(context_), [self = shared_from_this()](
                                                         boost::system::error_code ec,
                                                         tcp::socket socket) {
    if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
    if (ec) {
      // Out of file descriptors and the like: report, and try again a little later rather
      // than spin.
      ReportIncident(self->on_incident_, {"http", IncidentKind::kAcceptFailed, ec.message()});
      self->retry_timer_.expires_after(std::chrono::milliseconds(100));
      return self->retry_timer_.async_wait([self](boost::system::error_code) { self->DoAccept(); });
    }
    // A connection that cannot be set up (out of memory, a socket option refused) is dropped and
    // noted; accepting goes on whatever it threw.
    (void)GuardStep(
        "http accept", "",
        self->router_.metrics().HandlerExceptions(http_api::InternalError::kHttpConnection), [&] {
          if (self->accept_hook_) self->accept_hook_();
          if (self->tls_) {
            std::make_shared<TlsHttpConnection>(std::move(socket), *self->tls_, self->router_,
                                                self->limits_, self->registry_)
                ->Run();
          } else {
            std::make_shared<PlainHttpConnection>(std::move(socket), self->router_, self->limits_,
                                                  self->registry_)
                ->Run();
          }
        });
    self->DoAccept();
  });
}

}  // namespace nbspamd::http_server
