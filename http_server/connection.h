// HttpConnection: one HTTP/1.1 connection, in the manner of Boost.Beast's advanced server: paired
// Do/On handlers on the connection's strand, a fresh parser per request with header and body
// limits, a deadline on every read, and keep-alive. Every handler runs its step guarded
// (common/handler_guard.h): an exception ends this connection only, logged and counted in
// nbspamd_internal_errors_total{where="http_session"}, and never reaches the I/O thread.
//
// BasicHttpConnection<Stream> is that over plain TCP (PlainHttpConnection) or over TLS
// (TlsHttpConnection: Beast's ssl_stream over OpenSSL, a handshake first, under the idle
// timeout, and a TLS close at the end). The registry holds both as HttpConnection.
#ifndef NBSPAMD_HTTP_SERVER_CONNECTION_H_
#define NBSPAMD_HTTP_SERVER_CONNECTION_H_

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message_generator.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "http_api/http_errors.h"
#include "http_api/http_limits.h"
#include "http_api/metrics.h"
#include "http_api/router.h"
#include "http_server/connection_registry.h"

namespace nbspamd::http_server {

// What the registry and the listener know of a connection, plain or TLS.
class HttpConnection {
 public:
  virtual ~HttpConnection() = default;
  // Starts (the TLS handshake, then) reading requests.
  virtual void Run() = 0;
  // Asks the connection to end: at once when it waits for a request, else after the response to
  // the request in flight has been written. Thread-safe.
  virtual void Shutdown() = 0;
};

// Lives as long as an asynchronous operation holds it (enable_shared_from_this).
template <class Stream>
class BasicHttpConnection final : public HttpConnection,
                                  public std::enable_shared_from_this<BasicHttpConnection<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, boost::beast::tcp_stream>;

  // Plain TCP.
  BasicHttpConnection(boost::asio::ip::tcp::socket&& socket, const http_api::Router& router,
                      const http_api::HttpLimits& limits,
                      HttpConnectionRegistry& registry) requires(!kTls);
  // TLS with `tls`'s certificate and key; `tls` outlives the connection.
  BasicHttpConnection(boost::asio::ip::tcp::socket&& socket, boost::asio::ssl::context& tls,
                      const http_api::Router& router, const http_api::HttpLimits& limits,
                      HttpConnectionRegistry& registry) requires(kTls);
  ~BasicHttpConnection() override;

  void Run() override;
  void Shutdown() override;

 private:
  using std::enable_shared_from_this<BasicHttpConnection<Stream>>::shared_from_this;
  // The TCP stream under TLS (or the stream itself): deadlines, cancel, the socket.
  boost::beast::tcp_stream& Tcp() { return boost::beast::get_lowest_layer(stream_); }
  void OnHandshake(boost::beast::error_code ec);
  void DoReadHeader();
  enum class ReadUntil { kHeader, kBody };
  // Reads into the parser until its header (or the whole request) is in, then calls
  // OnReadHeader (OnReadBody); a read error goes to OnReadError. The one read of the connection.
  void Receive(ReadUntil until);
  void OnReadHeader();
  void DoReadBody();
  void OnReadBody();
  void OnReadError(boost::beast::error_code ec);
  // Notes the request whose header has arrived (or failed): its endpoint, start and id.
  void BeginRequest();
  // Frees the admitted bytes of the request in flight, if any (body_ticket_).
  void ReleaseBody();
  void DoWrite(http_api::Response response, bool close);
  // Writes `head` with the file at `path` as its body (http_api::kBodyFileField), then removes the
  // file.
  void DoWriteFile(http_api::Response head, const std::string& path, bool close);
  // What follows a response once written.
  enum class AfterWrite { kReadBody, kReadNext, kClose };
  // Writes `message` (which it owns until written), then goes on as `next` says. The one write
  // of the connection, whatever the body type: each is a whole instantiation of Beast's write
  // over the stream (TLS's is the most costly to compile).
  void Send(boost::beast::http::message_generator message, AfterWrite next);
  void OnWrite(AfterWrite next, boost::beast::error_code ec);
  void DoClose();
  void DoDrain();
  // Runs `step` (a handler's body, on the strand); when it throws, notes the exception and
  // closes the connection at once.
  template <class Step>
  void Guarded(Step&& step) noexcept;

  // The most a connection keeps of the room its requests needed, and the room for a chunked
  // body; and the most a declared body's read asks for.
  static constexpr std::size_t kReadRoomBytes = 16 << 10;
  static constexpr std::size_t kBodyReadBytes = 64 << 10;
  // What Beast's read asks of an empty buffer.
  static constexpr std::size_t kFirstReadBytes = 512;

  Stream stream_;
  boost::beast::flat_buffer buffer_;
  // buffer_'s capacity as counted in nbspamd_http_read_buffer_bytes: as of the start of each
  // read (Beast may grow it within a read of a long header, up to max_header_bytes).
  std::size_t counted_buffer_bytes_ = 0;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  const http_api::Router& router_;
  const http_api::HttpLimits& limits_;
  HttpConnectionRegistry& registry_;
  bool in_flight_ = false;  // A request has arrived and its response is not yet written.
  // When reading the request must be done: idle_timeout after its first byte was awaited.
  std::chrono::steady_clock::time_point read_deadline_;
  // The admitted bytes of the request in flight (registry_.body_bytes), until it is answered,
  // and how many they are (counted in nbspamd_http_body_bytes_in_flight). ReleaseBody frees them.
  std::optional<Admission::Ticket> body_ticket_;
  std::uint64_t body_ticket_bytes_ = 0;
  // The request in flight, for its response's metrics, log line and X-Request-Id.
  http_api::Endpoint endpoint_ = http_api::Endpoint::kOther;
  std::chrono::steady_clock::time_point started_;
  std::string request_id_;
  std::string method_;
  bool shutting_down_ = false;
  bool unread_input_ = false;  // The client may still be sending a request we answered early.
};

using PlainHttpConnection = BasicHttpConnection<boost::beast::tcp_stream>;
using TlsHttpConnection = BasicHttpConnection<boost::beast::ssl_stream<boost::beast::tcp_stream>>;

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_CONNECTION_H_
