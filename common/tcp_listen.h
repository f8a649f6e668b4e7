// ListenOn: opens, binds and listens a TCP acceptor, the same way for every TCP front end
// (HTTP, spamd; the milter also listens on Unix sockets and has its own).
#ifndef NBSPAMD_COMMON_TCP_LISTEN_H_
#define NBSPAMD_COMMON_TCP_LISTEN_H_

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/socket_base.hpp>
#include <expected>
#include <sstream>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd {

// Listens on `endpoint` with SO_REUSEADDR (a restart binds while old connections linger).
// Errors: kUnavailable, "cannot <step> <address>[ (<front_end>)]: <reason>", the step being
// "open a socket for", "configure" or "listen on". Not thread-safe for one acceptor.
[[nodiscard]] inline std::expected<void, Error> ListenOn(
    boost::asio::ip::tcp::acceptor& acceptor, const boost::asio::ip::tcp::endpoint& endpoint,
    std::string_view front_end = {}) {
  namespace net = boost::asio;
  boost::system::error_code ec;
  const auto fail = [&](std::string_view step) {
    std::ostringstream message;
    message << "cannot " << step << ' ' << endpoint;
    if (!front_end.empty()) message << " (" << front_end << ')';
    message << ": " << ec.message();
    return MakeError(ErrorCode::kUnavailable, message.str());
  };
  acceptor.open(endpoint.protocol(), ec);
  if (ec) return fail("open a socket for");
  acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return fail("configure");
  acceptor.bind(endpoint, ec);
  if (ec) return fail("listen on");
  acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen on");
  return {};
}

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_TCP_LISTEN_H_
