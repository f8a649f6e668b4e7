// SpamdConnection: one spamd protocol connection, which carries one request as in spamd (spamc
// and Exim connect once per message). On the connection's strand it reads the request through a
// SpamdRequestParser under a deadline, checks the TELL policy as soon as the headers are in,
// calls the backend under a verdict deadline (past it: EX_TEMPFAIL, and the late answer is
// dropped), writes the response and closes. Errors are answered as spamd answers them:
// the status line alone, then the connection closes. Unread input is drained for a moment
// before closing, so that closing cannot reset the connection under the response.
//
// Every handler's body runs guarded (GuardStep): an exception is counted (handler_exceptions),
// noted in the log and ends this connection only; none reaches the I/O thread. Backend errors
// go to SpamdOptions::on_incident, with the backend's message the client never sees.
#ifndef NBSPAMD_SPAMD_CONNECTION_H_
#define NBSPAMD_SPAMD_CONNECTION_H_

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "spamd/backend.h"
#include "spamd/connection_registry.h"
#include "spamd/options.h"
#include "spamd/request.h"

namespace nbspamd::spamd {

// Lives as long as an asynchronous operation holds it (enable_shared_from_this).
// REQUIRES: `backend` outlives the connection; the socket's executor is a strand.
class SpamdConnection : public std::enable_shared_from_this<SpamdConnection> {
 public:
  SpamdConnection(boost::asio::ip::tcp::socket&& socket, SpamdBackend& backend,
                  std::shared_ptr<const SpamdOptions> options,
                  std::shared_ptr<SpamdConnectionRegistry> connections);
  ~SpamdConnection();

  // Starts reading the request.
  void Run();
  // Asks the connection to end: at once when no byte of a request has arrived, else once the
  // request is answered. Thread-safe.
  void Shutdown();

 private:
  enum class Deadline { kRead, kVerdict, kWrite, kDrain };

  void DoRead();
  void OnRead(boost::system::error_code ec, std::size_t bytes);
  // Acts on the parser's state after new input: asks for more, answers, or refuses.
  void Advance(ParseStatus status);
  void Serve();
  void ServeTell();
  void DoWrite(std::string response, bool ok);
  void OnWrite(boost::system::error_code ec);
  void DoClose();
  void DoDrain();
  void Close();
  void StartDeadline(Deadline kind, std::chrono::milliseconds after);
  // Arms the verdict deadline for a request handed to the backend.
  void AwaitBackend();
  // Whether the backend's answer is still awaited (and no longer is): false when the verdict
  // deadline answered the request first.
  bool TakeBackendAnswer();
  // Answers a backend error: reports it (with the backend's message) and writes the status line.
  void AnswerBackendError(const Error& error);
  // Runs `step` (a handler's body, on the strand); when it throws, notes it and closes.
  template <class Step>
  void Guarded(Step&& step) noexcept;
  // Runs `step` on the strand, guarded: for completions of the backend, from any thread.
  template <class Step>
  void PostGuarded(Step&& step);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer deadline_;
  SpamdBackend& backend_;
  std::shared_ptr<const SpamdOptions> options_;
  std::shared_ptr<SpamdConnectionRegistry> connections_;
  std::optional<boost::asio::ip::address> peer_;
  SpamdRequestParser parser_;
  std::array<char, 64 * 1024> read_buffer_;
  std::string response_;
  std::string tell_source_;    // The source of the grant that allowed this TELL.
  bool received_any_ = false;  // Some byte of a request has arrived.
  bool input_ended_ = false;   // The client closed its sending side.
  bool reading_ = false;       // A read is in flight.
  bool answering_ = false;     // The request is complete or refused: reading is over.
  bool timed_out_ = false;
  bool awaiting_backend_ = false;  // A request is with the backend, its deadline armed.
  bool tell_checked_ = false;
  bool shutting_down_ = false;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_CONNECTION_H_
