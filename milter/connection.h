// MilterConnection: one MTA connection over TCP or a Unix-domain socket, in the manner of the HTTP
// connection: paired Do/On handlers on the connection's strand, a deadline on every read and write,
// and every handler's step guarded so that an exception closes this connection only (counted in
// MilterCounters::internal_errors) and never reaches the I/O thread.
//
// It reads packets (PacketDecoder), hands each command to a Conversation, writes the replies, and
// at end of message calls MilterBackend::ClassifyAsync; no byte is read while the verdict is
// awaited (the MTA sends nothing then anyway). A protocol error (malformed, oversized or truncated
// packet, unknown command, command out of order) closes the connection, once the replies owed to
// the commands before it are written, and is counted; the MTA then applies its
// milter_default_action to the message in progress.
//
// Errors never escape: the connection closes on a protocol error, a timeout (the MTA silent, or
// leaving our replies unread, for read_timeout), a socket error or the MTA's QUIT. Thread-safety:
// Run and Shutdown may be called from any thread.
#ifndef NBSPAMD_MILTER_CONNECTION_H_
#define NBSPAMD_MILTER_CONNECTION_H_

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/incident.h"
#include "milter/backend.h"
#include "milter/conversation.h"
#include "milter/counters.h"
#include "milter/options.h"
#include "milter/protocol.h"

namespace nbspamd::milter {

// What every connection of a listener shares. Must outlive its connections (they hold it by
// shared_ptr).
struct ConnectionContext {
  ConversationOptions conversation;
  ConnectionOptions connection;
  MilterBackend* backend = nullptr;    // REQUIRES: not null; outlives the connections.
  MilterCounters* counters = nullptr;  // REQUIRES: not null; outlives the connections.
  // Told why a connection closed early (a protocol error, a timeout) and of failed accepts, for
  // the daemon's log (common/incident.h); exceptions are noted by NoteHandlerException. May be
  // empty.
  IncidentHook on_incident;
};

// Lives as long as an asynchronous operation (or the backend's pending answer) holds it.
class MilterConnection : public std::enable_shared_from_this<MilterConnection> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  // `socket`'s executor should be a strand (the listener makes one per connection). `on_closed`
  // runs once, from the destructor; it may be empty.
  MilterConnection(Socket socket, std::shared_ptr<const ConnectionContext> context,
                   std::function<void(MilterConnection*)> on_closed);
  ~MilterConnection();
  MilterConnection(const MilterConnection&) = delete;
  MilterConnection& operator=(const MilterConnection&) = delete;

  // Starts reading commands.
  void Run();
  // Asks the connection to end: at once when it waits between messages, else once the reply to
  // the message in flight is written.
  void Shutdown();

 private:
  void Process();
  // Starts the timeout of the read or write about to start (ConnectionOptions::read_timeout).
  void ArmDeadline();
  void DoRead();
  void OnRead(boost::system::error_code ec, std::size_t bytes);
  void DoWrite();
  void OnWrite(boost::system::error_code ec);
  void StartClassify(ClassifyRequest request);
  // The verdict of classification `id` (verdict_id_ when it was started); a late one, after its
  // deadline answered the message, is dropped.
  void OnVerdict(std::uint64_t id, std::expected<MilterVerdict, Error> verdict);
  void Fail(std::string_view why);
  void Close();
  // Runs `step` (a handler's body, on the strand); when it throws, notes the exception and
  // closes the connection.
  template <class Step>
  void Guarded(Step&& step) noexcept;

  Socket socket_;
  boost::asio::steady_timer deadline_;          // Of the read or write in flight.
  boost::asio::steady_timer verdict_deadline_;  // Of the classification in flight.
  std::shared_ptr<const ConnectionContext> context_;
  std::function<void(MilterConnection*)> on_closed_;
  PacketDecoder decoder_;
  Conversation conversation_;
  std::string read_buffer_;
  std::string output_;   // Replies waiting to be written.
  std::string writing_;  // Replies being written.
  bool read_in_flight_ = false;
  bool write_in_flight_ = false;
  bool close_after_write_ = false;
  bool shutting_down_ = false;
  bool closed_ = false;
  std::uint64_t verdict_id_ = 0;  // Of the latest classification started.
  bool verdict_pending_ = false;  // It has not been answered yet.
};

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_CONNECTION_H_
