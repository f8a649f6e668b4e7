#include "milter/listener.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

namespace nbspamd::milter {

namespace net = boost::asio;
using Generic = net::generic::stream_protocol;

MilterListener::MilterListener(net::io_context& io,
                               std::shared_ptr<const ConnectionContext> context)
    : io_(io),
      acceptor_(net::make_strand(io)),
      retry_timer_(acceptor_.get_executor()),
      context_(std::move(context)) {}

MilterListener::~MilterListener() = default;

std::expected<std::shared_ptr<MilterListener>, Error> MilterListener::Create(
    net::io_context& io, const MilterAddress& address, ConnectionContext context,
    mode_t unix_socket_mode) {
  std::shared_ptr<MilterListener> listener(
      new MilterListener(io, std::make_shared<const ConnectionContext>(std::move(context))));
  boost::system::error_code ec;
  const std::string name = FormatMilterAddress(address);
  const auto fail = [&](const char* step, const std::string& reason) {
    return MakeError(ErrorCode::kUnavailable,
                     std::string("cannot ") + step + " milter socket " + name + ": " + reason);
  };
  Generic::endpoint endpoint;
  if (address.kind == MilterAddress::Kind::kUnix) {
    struct stat existing {};
    if (::lstat(address.path.c_str(), &existing) == 0) {
      if (!S_ISSOCK(existing.st_mode))
        return fail("create", "a file that is not a socket is there");
      if (::unlink(address.path.c_str()) != 0) return fail("replace", std::strerror(errno));
    }
    endpoint = Generic::endpoint(net::local::stream_protocol::endpoint(address.path));
  } else {
    endpoint = Generic::endpoint(
        net::ip::tcp::endpoint(net::ip::make_address(address.host, ec), address.port));
    if (ec) return fail("resolve", ec.message());
  }
  auto& acceptor = listener->acceptor_;
  acceptor.open(endpoint.protocol(), ec);
  if (ec) return fail("open", ec.message());
  if (address.kind == MilterAddress::Kind::kTcp) {
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (ec) return fail("configure", ec.message());
  }
  acceptor.bind(endpoint, ec);
  if (ec) return fail("bind", ec.message());
  acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen on", ec.message());
  listener->bound_ = address;
  if (address.kind == MilterAddress::Kind::kUnix) {
    if (::chmod(address.path.c_str(), unix_socket_mode) != 0) {
      return fail("set the mode of", std::strerror(errno));
    }
  } else {
    const Generic::endpoint local = acceptor.local_endpoint(ec);
    if (ec) return fail("read the address of", ec.message());
    net::ip::tcp::endpoint tcp;
    std::memcpy(tcp.data(), local.data(), std::min<std::size_t>(local.size(), tcp.capacity()));
    tcp.resize(std::min<std::size_t>(local.size(), tcp.capacity()));
    listener->bound_.port = tcp.port();
  }
  return listener;
}

void MilterListener::Run() {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->DoAccept(); });
}

void MilterListener::Stop() {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
    if (self->acceptor_.is_open()) {
      boost::system::error_code ignored;
      self->acceptor_.close(ignored);
      if (self->bound_.kind == MilterAddress::Kind::kUnix) ::unlink(self->bound_.path.c_str());
    }
    self->retry_timer_.cancel();
    self->registry_->BeginShutdown(nullptr);
  });
}

std::size_t MilterListener::OpenConnections() const { return registry_->Count(); }

void MilterListener::DoAccept() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept(net::make_strand(io_), [self = shared_from_this()](
                                                    boost::system::error_code ec,
                                                    Generic::socket socket) {
    if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
    if (ec) {
      // Out of file descriptors and the like: try again a little later rather than spin.
      ReportIncident(self->context_->on_incident,
                     {"milter", IncidentKind::kAcceptFailed, ec.message()});
      self->retry_timer_.expires_after(std::chrono::milliseconds(100));
      return self->retry_timer_.async_wait([self](boost::system::error_code) { self->DoAccept(); });
    }
    auto registry = self->registry_;
    bool stopped = false;
    // A connection that cannot be set up is dropped and noted; accepting goes on whatever it
    // threw.
    (void)GuardStep("milter accept", "", self->context_->counters->internal_errors, [&] {
      if (self->accept_hook_) self->accept_hook_();
      // Registered before it runs, removed when it is destroyed.
      auto connection = std::make_shared<MilterConnection>(
          std::move(socket), self->context_,
          [registry](MilterConnection* closed) { registry->Remove(closed); });
      // Not served when a stop came first: the socket closes with the connection.
      if (!registry->Add(connection.get(), connection)) {
        stopped = true;
        return;
      }
      connection->Run();
    });
    if (stopped) return;
    self->DoAccept();
  });
}

}  // namespace nbspamd::milter
