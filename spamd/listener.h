// SpamdListener: accepts spamd protocol connections on a TCP address and runs a SpamdConnection
// for each, against one SpamdBackend.
//
//   auto listener = SpamdListener::Create(context, {address, 783}, backend, options);
//   if (!listener) return Fail(listener.error());
//   (*listener)->Run();
//   ...
//   (*listener)->Stop([] { /* every connection has ended */ });
//
// Thread safety: Run, Stop, LocalEndpoint and counters may be called from any thread; the
// listener runs on the io_context's threads (a strand of its own, and one per connection).
#ifndef NBSPAMD_SPAMD_LISTENER_H_
#define NBSPAMD_SPAMD_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <expected>
#include <functional>
#include <memory>

#include "common/error.h"
#include "spamd/backend.h"
#include "spamd/connection_registry.h"
#include "spamd/options.h"

namespace nbspamd::spamd {

class SpamdListener : public std::enable_shared_from_this<SpamdListener> {
 public:
  // Binds and listens on `endpoint` (port 0: an ephemeral port, see LocalEndpoint). Errors:
  // kInvalidArgument for a TELL policy ValidateTellPolicy refuses; kUnavailable naming the
  // address and the reason (in use, permission denied, no such address).
  // REQUIRES: `backend` outlives the listener and every connection it accepted.
  [[nodiscard]] static std::expected<std::shared_ptr<SpamdListener>, Error> Create(
      boost::asio::io_context& context, const boost::asio::ip::tcp::endpoint& endpoint,
      SpamdBackend& backend, SpamdOptions options);

  // The bound address, with the real port when port 0 was asked for.
  [[nodiscard]] boost::asio::ip::tcp::endpoint LocalEndpoint() const;

  // Starts accepting.
  void Run();
  // Stops accepting and tells every connection to finish: one still waiting for its first byte
  // closes at once; a request being read (within its read deadline) or with the backend is
  // answered, then closes. `drained`, when given, runs once no connection is left (on the thread
  // of the last one, or on the caller's when none is open). Call once.
  void Stop(std::function<void()> drained = {});

  [[nodiscard]] const SpamdCounters& counters() const { return connections_->counters; }
  // The connections open now.
  [[nodiscard]] std::size_t OpenConnections() const { return connections_->Count(); }

 private:
  SpamdListener(boost::asio::io_context& context, SpamdBackend& backend, SpamdOptions options);
  void DoAccept();

  boost::asio::io_context& context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;  // Delays accepting again after a failed accept.
  SpamdBackend& backend_;
  std::shared_ptr<const SpamdOptions> options_;
  std::shared_ptr<SpamdConnectionRegistry> connections_;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_LISTENER_H_
