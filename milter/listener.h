// MilterListener: accepts MTA connections on TCP or a Unix-domain socket and runs a
// MilterConnection for each; Stop closes the socket and lets every connection finish the message
// it is in, then close.
//
//   MilterCounters counters;
//   ConnectionContext context;
//   context.backend = &backend;
//   context.counters = &counters;
//   auto listener = MilterListener::Create(io, *ParseMilterAddress("inet:127.0.0.1:8891"),
//                                          std::move(context));
//   if (!listener) return std::unexpected(listener.error());
//   (*listener)->Run();
//   ...
//   (*listener)->Stop();  // then run `io` until OpenConnections() is 0, or for a grace period
//
// Why not libmilter (Sendmail's filter library, which most milters use): smfi_main() owns the
// process's model of concurrency. It runs its own accept loop and a thread per MTA connection
// that blocks in each callback, so an asynchronous classification would hold a thread per
// connection; it starts a thread that sigwait()s for SIGHUP, SIGTERM and SIGINT (and blocks them
// in the calling thread), which competes with the daemon's own signal handling and its graceful
// shutdown (finish in-flight HTTP requests, drain, close the store); it keeps one filter
// description per process in global state (smfi_register) and stops only through smfi_stop(),
// which ends the whole library rather than draining connections. The protocol itself is small
// (protocol.h): speaking it on the daemon's own Asio I/O threads costs a few hundred lines and
// keeps one threading model, one shutdown path and one place for limits.
//
// Thread-safety: Run, Stop, LocalAddress and OpenConnections may be called from any thread.
#ifndef NBSPAMD_MILTER_LISTENER_H_
#define NBSPAMD_MILTER_LISTENER_H_

#include <sys/stat.h>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <expected>
#include <functional>
#include <memory>

#include "common/connection_registry.h"
#include "common/error.h"
#include "milter/address.h"
#include "milter/connection.h"

namespace nbspamd::milter {

class MilterListener : public std::enable_shared_from_this<MilterListener> {
 public:
  // Binds and listens on `address`. A Unix socket replaces a stale socket file at its path (never
  // another kind of file) and gets `unix_socket_mode` (0660: the MTA's group must be able to
  // connect; Postfix's smtpd runs as the postfix user). REQUIRES: context.backend and
  // context.counters set; options validated (ValidateConversationOptions,
  // ValidateConnectionOptions). Errors: kUnavailable naming the address and the reason (in use,
  // permission denied, no such address or folder, a file that is not a socket in the way).
  [[nodiscard]] static std::expected<std::shared_ptr<MilterListener>, Error> Create(
      boost::asio::io_context& io, const MilterAddress& address, ConnectionContext context,
      mode_t unix_socket_mode = 0660);
  ~MilterListener();

  // The bound address, with the real port when port 0 was asked for.
  [[nodiscard]] MilterAddress LocalAddress() const { return bound_; }

  // A seam for tests: runs for each accepted connection before it is set up, where a fault of
  // the set-up would strike; what it throws is handled as such a fault (dropped, noted and
  // counted in internal_errors; accepting goes on). Call before Run.
  void SetAcceptHook(std::function<void()> hook) { accept_hook_ = std::move(hook); }

  // Starts accepting.
  void Run();
  // Stops accepting (and removes the Unix socket file), and asks every open connection to end
  // after its message in flight.
  void Stop();
  // Connections not yet closed.
  [[nodiscard]] std::size_t OpenConnections() const;

 private:
  MilterListener(boost::asio::io_context& io, std::shared_ptr<const ConnectionContext> context);
  void DoAccept();

  boost::asio::io_context& io_;
  boost::asio::basic_socket_acceptor<boost::asio::generic::stream_protocol> acceptor_;
  boost::asio::steady_timer retry_timer_;  // Delays accepting again after a failed accept.
  std::shared_ptr<const ConnectionContext> context_;
  MilterAddress bound_;
  std::function<void()> accept_hook_;

  // The open connections, so that Stop can reach them. Shared with the connections' close
  // callbacks, which may run after the listener is gone.
  std::shared_ptr<ConnectionRegistry<MilterConnection>> registry_ =
      std::make_shared<ConnectionRegistry<MilterConnection>>();
};

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_LISTENER_H_
