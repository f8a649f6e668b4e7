// HttpClient: a small blocking HTTP/1.1 client for tests, over one keep-alive connection to
// 127.0.0.1.
#ifndef NBSPAMD_TESTS_SUPPORT_HTTP_CLIENT_H_
#define NBSPAMD_TESTS_SUPPORT_HTTP_CLIENT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nbspamd::testing {

using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

class HttpClient {
 public:
  explicit HttpClient(unsigned short port);

  // Sends one request and reads the response; reconnects when the server closed the connection.
  // Throws boost::system::system_error on a network failure.
  HttpResponse Send(boost::beast::http::verb method, const std::string& target,
                    const std::string& body = "", const std::string& content_type = "text/plain",
                    const std::vector<std::pair<std::string, std::string>>& headers = {});

  // POST with a body, and the response's JSON.
  boost::json::value PostJson(const std::string& target, const std::string& body,
                              const std::string& content_type = "text/plain");
  boost::json::value GetJson(const std::string& target);

  // Writes raw bytes on a new connection and returns everything the server sends back until it
  // closes the connection (or `timeout` passes).
  std::string RawExchange(const std::string& bytes,
                          std::chrono::seconds timeout = std::chrono::seconds(10));

 private:
  void Connect();

  unsigned short port_;
  boost::asio::io_context context_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  bool connected_ = false;
};

// A /classify answer without its "scan_id" and "scan_signature" fields: the rest of it depends
// only on the model, so two answers of one model compare equal.
[[nodiscard]] std::string WithoutScanId(const std::string& body);

// A /stats answer without "verdict_thresholds" → "feedback": what the held-out scores of the
// newest training records give depends on the order of training and on the ledger (a dump holds
// none), the rest only on the model and the settings. Not JSON: the body as it was.
[[nodiscard]] std::string WithoutFeedback(const std::string& body);

// The value of an unlabelled gauge or counter in the client's GET /metrics (`name` followed by a
// space); adds a test failure and returns 0 when the request fails or the name is missing.
[[nodiscard]] double MetricValue(HttpClient& client, std::string_view name);

// A plain TCP connection to 127.0.0.1, for tests that send a request in pieces or watch the
// server close a connection.
class RawConnection {
 public:
  explicit RawConnection(unsigned short port);
  // Throws boost::system::system_error when the write fails.
  void Write(const std::string& bytes);
  // Everything the server sends until it closes the connection, or until `timeout` passes.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // What the server sends until it contains `marker` (true), or until it closes the connection
  // or `timeout` passes (false). Bytes after the marker that came with it are returned too.
  bool ReadUntil(std::string_view marker, std::string& received,
                 std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True when the server closed the connection within `timeout` (reads see end of stream).
  bool ClosedByServerWithin(std::chrono::milliseconds timeout);

  // What the server sent until it closed the connection or `timeout` passed, and which of the
  // two happened.
  struct Received {
    std::string bytes;
    bool closed = false;  // End of stream or reset; false when `timeout` passed first.
  };
  Received ReadUntilClosedOrTimeout(std::chrono::milliseconds timeout);
  // Half-closes the connection: the server reads end of stream, the client can still read.
  void ShutdownSend();

 private:
  boost::asio::io_context context_;
  boost::beast::tcp_stream stream_;
};

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_HTTP_CLIENT_H_
