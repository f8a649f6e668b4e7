#include "client/http_connection.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cstdio>
#include <optional>
#include <utility>

namespace nbspamd::client {
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using net::ip::tcp;

namespace {

// Bodies larger than this wait for "100 Continue" before being sent.
constexpr std::size_t kExpectContinueBytes = 1 << 20;
// The largest answer read (an explanation of 1000 tokens is far smaller).
constexpr std::uint64_t kMaxReplyBytes = 64 << 20;

// Runs the asynchronous operations started on `context` to completion.
void RunAll(net::io_context& context) {
  context.restart();
  context.run();
}

Error TransportError(beast::error_code ec, std::chrono::milliseconds timeout) {
  if (ec == beast::error::timeout) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", static_cast<double>(timeout.count()) / 1000);
    return Error{ErrorCode::kResourceExhausted,
                 std::string("no answer from the daemon within ") + seconds + " s (--timeout)"};
  }
  return Error{ErrorCode::kInternal, "the connection to the daemon failed: " + ec.message()};
}

}  // namespace

std::expected<ServerAddress, Error> ParseServer(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the server must be HOST:PORT, not \"" + std::string(text) + "\"");
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the server port must be 1-65535, not \"" + std::string(port) + "\"");
  }
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  return ServerAddress{std::string(host), std::string(port)};
}

std::string ErrorMessage(const HttpReply& reply) {
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(reply.body, ec);
  if (!ec && body.is_object()) {
    const auto* error = body.as_object().if_contains("error");
    if (error != nullptr && error->is_object()) {
      const auto* message = error->as_object().if_contains("message");
      if (message != nullptr && message->is_string()) {
        return std::string(message->as_string()) + " (HTTP " + std::to_string(reply.status) + ")";
      }
    }
  }
  return "the daemon answered HTTP " + std::to_string(reply.status);
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
        (byte >= '0' && byte <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
      encoded += c;
    } else {
      encoded += '%';
      encoded += kHex[byte >> 4];
      encoded += kHex[byte & 15];
    }
  }
  return encoded;
}

HttpConnection::HttpConnection(ServerAddress server, std::string token,
                               std::chrono::milliseconds timeout)
    : server_(std::move(server)), token_(std::move(token)), timeout_(timeout), stream_(context_) {}

void HttpConnection::Close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
  buffer_.clear();
  connected_ = false;
}

std::expected<void, Error> HttpConnection::Connect() {
  Close();
  tcp::resolver resolver(context_);
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  resolver.async_resolve(server_.host, server_.port,
                         [&](beast::error_code e, tcp::resolver::results_type r) {
                           ec = e;
                           endpoints = std::move(r);
                         });
  RunAll(context_);
  const std::string where = server_.host + ":" + server_.port;
  if (ec)
    return MakeError(ErrorCode::kUnavailable, "cannot resolve " + where + ": " + ec.message());
  stream_.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  RunAll(context_);
  if (ec == beast::error::timeout) {
    return MakeError(ErrorCode::kUnavailable, "cannot connect to " + where + ": timed out");
  }
  if (ec)
    return MakeError(ErrorCode::kUnavailable, "cannot connect to " + where + ": " + ec.message());
  connected_ = true;
  return {};
}

std::expected<HttpReply, Error> HttpConnection::Send(http::verb method, const std::string& target,
                                                     const std::string& body) {
  for (int attempt = 0;; ++attempt) {
    const bool reused = connected_;
    stream_.expires_after(timeout_);
    if (!connected_) {
      if (auto connected = Connect(); !connected) return std::unexpected(connected.error());
    }
    bool answered = false;
    auto reply = Exchange(method, target, body, &answered);
    if (reply || !reused || answered || attempt > 0 ||
        reply.error().code == ErrorCode::kResourceExhausted) {
      return reply;
    }
    // The daemon closed the kept-alive connection meanwhile (idle timeout): once more.
  }
}

std::expected<HttpReply, Error> HttpConnection::Exchange(http::verb method,
                                                         const std::string& target,
                                                         const std::string& body, bool* answered) {
  http::request<http::string_body> request(method, target, 11);
  request.set(http::field::host, server_.host);
  request.set(http::field::user_agent, "nbspamc");
  if (!token_.empty()) request.set(http::field::authorization, "Bearer " + token_);
  if (method == http::verb::post) {
    request.set(http::field::content_type, "message/rfc822");
    request.body() = body;
  }
  const bool expect_continue = body.size() > kExpectContinueBytes;
  if (expect_continue) request.set(http::field::expect, "100-continue");
  request.prepare_payload();

  http::request_serializer<http::string_body> serializer(request);
  beast::error_code ec;
  auto read_reply = [&](http::response_parser<http::string_body>& parser) {
    parser.body_limit(kMaxReplyBytes);
    http::async_read(stream_, buffer_, parser, [&](beast::error_code e, std::size_t) { ec = e; });
    RunAll(context_);
  };
  // Beast's async_write_header and async_write are this loop, each a whole instantiation.
  auto write_until = [&](bool header_only) {
    while (!ec && !(header_only ? serializer.is_header_done() : serializer.is_done())) {
      http::async_write_some(stream_, serializer,
                             [&](beast::error_code e, std::size_t) { ec = e; });
      RunAll(context_);
    }
  };
  std::optional<http::response_parser<http::string_body>> parser(std::in_place);
  if (expect_continue) {
    write_until(/*header_only=*/true);
    if (!ec) read_reply(*parser);
    if (ec) {
      Close();
      return std::unexpected(TransportError(ec, timeout_));
    }
    *answered = true;
    if (parser->get().result() == http::status::continue_) parser.emplace();
  }
  if (!expect_continue || !parser->is_done() || parser->get().result() == http::status::continue_) {
    write_until(/*header_only=*/false);
    if (!ec) read_reply(*parser);
    if (ec) {
      Close();
      return std::unexpected(TransportError(ec, timeout_));
    }
  }
  *answered = true;
  http::response<http::string_body> response = parser->release();
  HttpReply reply{response.result_int(), std::move(response.body()), 0};
  if (const auto retry = response[http::field::retry_after]; !retry.empty()) {
    std::from_chars(retry.data(), retry.data() + retry.size(), reply.retry_after_seconds);
  }
  if (!response.keep_alive()) Close();
  return reply;
}

}  // namespace nbspamd::client
