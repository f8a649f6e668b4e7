// HttpConnection: one blocking HTTP/1.1 keep-alive connection from nbspamc to the daemon, with a
// deadline on each request (connect, write and read together), and the bearer token on every
// request. Not thread-safe: each worker thread has its own.
//
//   auto server = ParseServer("127.0.0.1:7830");
//   HttpConnection connection(*server, token, std::chrono::seconds(30));
//   auto reply = connection.Send(http::verb::post, "/classify", body);
//   if (!reply) ...                  // could not reach the daemon, or no answer in time
//   else if (reply->status != 200)   // the daemon's error: ErrorMessage(*reply)
//
// Errors: kUnavailable when the daemon cannot be reached (name, connect), kResourceExhausted
// when the deadline passed, kInternal when the exchange broke off, kInvalidArgument for a bad
// server address.
#ifndef NBSPAMD_CLIENT_HTTP_CONNECTION_H_
#define NBSPAMD_CLIENT_HTTP_CONNECTION_H_

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::client {

// Where the daemon listens.
struct ServerAddress {
  std::string host;
  std::string port;
};

// Parses "HOST:PORT" (or "[IPv6]:PORT").
[[nodiscard]] std::expected<ServerAddress, Error> ParseServer(std::string_view text);

// The daemon's answer.
struct HttpReply {
  unsigned status = 0;
  std::string body;
  unsigned retry_after_seconds = 0;  // From Retry-After (429, 503), else 0.
};

// The message of the daemon's JSON error body {"error": {"code", "message"}}, or a description
// of the status when the body is not one.
[[nodiscard]] std::string ErrorMessage(const HttpReply& reply);

class HttpConnection {
 public:
  // `token` may be empty (no Authorization header).
  HttpConnection(ServerAddress server, std::string token, std::chrono::milliseconds timeout);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends one request and reads the answer, connecting first when needed. A body over 1 MiB is
  // sent after the daemon's "100 Continue", so a body over the daemon's limit is refused (413)
  // without being sent. When a kept-alive connection turns out closed by the daemon, the request
  // is tried once more on a new connection.
  [[nodiscard]] std::expected<HttpReply, Error> Send(boost::beast::http::verb method,
                                                     const std::string& target,
                                                     const std::string& body = "");

 private:
  std::expected<void, Error> Connect();
  std::expected<HttpReply, Error> Exchange(boost::beast::http::verb method,
                                           const std::string& target, const std::string& body,
                                           bool* sent_anything);
  void Close();

  const ServerAddress server_;
  const std::string token_;
  const std::chrono::milliseconds timeout_;
  boost::asio::io_context context_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  bool connected_ = false;
};

// `text` percent-encoded for a query parameter value.
[[nodiscard]] std::string PercentEncode(std::string_view text);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_HTTP_CONNECTION_H_
