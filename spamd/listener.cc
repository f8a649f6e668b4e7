#include "spamd/listener.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>

#include "common/handler_guard.h"
#include "common/incident.h"
#include "common/tcp_listen.h"
#include "spamd/connection.h"

namespace nbspamd::spamd {

namespace net = boost::asio;
using net::ip::tcp;

SpamdListener::SpamdListener(net::io_context& context, SpamdBackend& backend, SpamdOptions options)
    : context_(context),
      acceptor_(net::make_strand(context)),
      retry_timer_(acceptor_.get_executor()),
      backend_(backend),
      options_(std::make_shared<const SpamdOptions>(std::move(options))),
      connections_(std::make_shared<SpamdConnectionRegistry>()) {}

std::expected<std::shared_ptr<SpamdListener>, Error> SpamdListener::Create(
    net::io_context& context, const tcp::endpoint& endpoint, SpamdBackend& backend,
    SpamdOptions options) {
  if (auto valid = ValidateTellPolicy(options.tell); !valid) {
    return std::unexpected(std::move(valid.error()));
  }
  std::shared_ptr<SpamdListener> listener(new SpamdListener(context, backend, std::move(options)));
  if (auto listening = ListenOn(listener->acceptor_, endpoint, "spamd"); !listening) {
    return std::unexpected(std::move(listening.error()));
  }
  return listener;
}

tcp::endpoint SpamdListener::LocalEndpoint() const {
  boost::system::error_code ignored;
  return acceptor_.local_endpoint(ignored);
}

void SpamdListener::Run() {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->DoAccept(); });
}

void SpamdListener::Stop(std::function<void()> drained) {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this(),
                                           drained = std::move(drained)]() mutable {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
    self->retry_timer_.cancel();
    self->connections_->BeginShutdown(drained ? std::move(drained) : std::function<void()>([] {}));
  });
}

void SpamdListener::DoAccept() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept(net::make_strand(context_), [self = shared_from_this()](
                                                         boost::system::error_code ec,
                                                         tcp::socket socket) {
    if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
    if (ec) {
      // Out of file descriptors and the like: try again a little later rather than spin.
      ReportIncident(self->options_->on_incident,
                     {"spamd", IncidentKind::kAcceptFailed, ec.message()});
      self->retry_timer_.expires_after(std::chrono::milliseconds(100));
      return self->retry_timer_.async_wait([self](boost::system::error_code) { self->DoAccept(); });
    }
    // Out of memory for one connection: that connection is dropped, accepting goes on.
    (void)GuardStep("spamd accept", "", self->connections_->counters.handler_exceptions, [&] {
      std::make_shared<SpamdConnection>(std::move(socket), self->backend_, self->options_,
                                        self->connections_)
          ->Run();
    });
    self->DoAccept();
  });
}

}  // namespace nbspamd::spamd
