#include "tests/support/http_client.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <string>

namespace nbspamd::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using net::ip::tcp;

HttpClient::HttpClient(unsigned short port) : port_(port), stream_(context_) {}

void HttpClient::Connect() {
  beast::error_code ignored;
  stream_.socket().close(ignored);
  buffer_.clear();
  stream_.expires_after(std::chrono::seconds(30));
  stream_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
  connected_ = true;
}

HttpResponse HttpClient::Send(http::verb method, const std::string& target, const std::string& body,
                              const std::string& content_type,
                              const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> request(method, target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!content_type.empty() && method == http::verb::post) {
    request.set(http::field::content_type, content_type);
  }
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.prepare_payload();
  for (int attempt = 0;; ++attempt) {
    if (!connected_) Connect();
    beast::error_code ec;
    stream_.expires_after(std::chrono::seconds(60));
    http::write(stream_, request, ec);
    HttpResponse response;
    if (!ec) http::read(stream_, buffer_, response, ec);
    if (!ec) {
      if (!response.keep_alive()) connected_ = false;
      return response;
    }
    connected_ = false;
    // A keep-alive connection the server closed meanwhile: try once on a fresh one.
    if (attempt > 0) throw beast::system_error(ec);
  }
}

boost::json::value HttpClient::PostJson(const std::string& target, const std::string& body,
                                        const std::string& content_type) {
  return boost::json::parse(Send(http::verb::post, target, body, content_type).body());
}

boost::json::value HttpClient::GetJson(const std::string& target) {
  return boost::json::parse(Send(http::verb::get, target).body());
}

std::string HttpClient::RawExchange(const std::string& bytes, std::chrono::seconds timeout) {
  RawConnection connection(port_);
  connection.Write(bytes);
  return connection.ReadUntilClosed(timeout);
}

RawConnection::RawConnection(unsigned short port) : stream_(context_) {
  stream_.expires_after(std::chrono::seconds(30));
  stream_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
}

void RawConnection::Write(const std::string& bytes) {
  stream_.expires_after(std::chrono::seconds(30));
  net::write(stream_, net::buffer(bytes));
}

std::string RawConnection::ReadUntilClosed(std::chrono::milliseconds timeout) {
  stream_.expires_after(timeout);
  std::string received;
  char chunk[4096];
  for (beast::error_code ec; !ec;) {
    const std::size_t n = stream_.read_some(net::buffer(chunk), ec);
    received.append(chunk, n);
  }
  return received;
}

bool RawConnection::ReadUntil(std::string_view marker, std::string& received,
                              std::chrono::milliseconds timeout) {
  stream_.expires_after(timeout);
  char chunk[4096];
  beast::error_code ec;
  while (received.find(marker) == std::string::npos) {
    const std::size_t n = stream_.read_some(net::buffer(chunk), ec);
    received.append(chunk, n);
    if (ec) return received.find(marker) != std::string::npos;
  }
  return true;
}

bool RawConnection::ClosedByServerWithin(std::chrono::milliseconds timeout) {
  stream_.expires_after(timeout);
  char chunk[4096];
  beast::error_code ec;
  while (!ec) stream_.read_some(net::buffer(chunk), ec);
  return ec == net::error::eof || ec == net::error::connection_reset;
}

RawConnection::Received RawConnection::ReadUntilClosedOrTimeout(std::chrono::milliseconds timeout) {
  stream_.expires_after(timeout);
  Received received;
  char chunk[4096];
  beast::error_code ec;
  while (!ec) {
    const std::size_t n = stream_.read_some(net::buffer(chunk), ec);
    received.bytes.append(chunk, n);
  }
  received.closed = ec == net::error::eof || ec == net::error::connection_reset;
  return received;
}

void RawConnection::ShutdownSend() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

double MetricValue(HttpClient& client, std::string_view name) {
  const HttpResponse response = client.Send(http::verb::get, "/metrics");
  EXPECT_EQ(response.result(), http::status::ok) << response.body();
  const std::string& text = response.body();
  const std::string line_start = "\n" + std::string(name) + " ";
  const std::size_t at = text.find(line_start);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no " << name << " in /metrics";
    return 0;
  }
  return std::stod(text.substr(at + line_start.size()));
}

std::string WithoutScanId(const std::string& body) {
  std::string without = body;
  for (const std::string_view field : {",\"scan_id\":\"", ",\"scan_signature\":\""}) {
    const std::size_t start = without.find(field);
    if (start == std::string::npos) continue;
    const std::size_t end = without.find('"', start + field.size());
    if (end == std::string::npos) continue;
    without = without.substr(0, start) + without.substr(end + 1);
  }
  return without;
}

std::string WithoutFeedback(const std::string& body) {
  boost::system::error_code error;
  boost::json::value stats = boost::json::parse(body, error);
  if (error || !stats.is_object()) return body;
  if (boost::json::value* thresholds = stats.as_object().if_contains("verdict_thresholds");
      thresholds != nullptr && thresholds->is_object()) {
    thresholds->as_object().erase("feedback");
  }
  return boost::json::serialize(stats);
}

}  // namespace nbspamd::testing
