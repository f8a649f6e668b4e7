// Hostile clients against the real daemon: malformed HTTP, oversize and truncated requests, bad
// chunking, invalid UTF-8, bad labels and ids, JSON of the wrong shape or depth, MIME bombs,
// slowloris connections and ten thousand idle connections. Each bad request must get a clear
// 4xx with a JSON error body (or a closed connection), valid input must be served, and after
// every one of them the daemon must still answer on a new connection.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using namespace std::string_literals;

constexpr int kIdleTimeoutSeconds = 2;
constexpr std::size_t kMaxHeaderBytes = 8192;
constexpr std::size_t kMaxBodyBytes = 8 << 20;

DaemonProcess StartDaemon(const TempDir& dir, int idle_timeout_seconds = kIdleTimeoutSeconds) {
  return StartTestDaemon(
      dir.Join("model"),
      {"--idle-timeout-seconds", std::to_string(idle_timeout_seconds), "--max-header-bytes",
       std::to_string(kMaxHeaderBytes), "--max-body-bytes", std::to_string(kMaxBodyBytes)});
}

void TrainSeed(unsigned short port) {
  HttpClient client(port);
  const std::pair<const char*, const char*> seed[] = {
      {"spam", "cheap prize winner claim your free money now"},
      {"spam", "free viagra offer click here now"},
      {"ham", "lunch meeting on friday about the quarterly report"},
      {"ham", "please review the attached report before the meeting"}};
  int n = 0;
  for (const auto& [label, text] : seed) {
    const auto response =
        client.Send(http::verb::post,
                    std::string("/train?label=") + label + "&id=seed-" + std::to_string(++n), text);
    ASSERT_EQ(response.result(), http::status::ok) << response.body();
  }
}

// The daemon still serves: GET /healthz on a new connection answers 200.
void ExpectHealthy(const DaemonProcess& daemon) {
  HttpClient client(daemon.port());
  HttpResponse response;
  try {
    response = client.Send(http::verb::get, "/healthz");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "/healthz failed: " << e.what() << "\n" << daemon.Log();
    return;
  }
  EXPECT_EQ(response.result(), http::status::ok) << response.body();
}

// A well-formed request, closing the connection after the answer.
std::string Request(const std::string& method, const std::string& target, const std::string& body,
                    const std::string& content_type = "text/plain",
                    const std::string& extra_headers = "") {
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!content_type.empty()) request += "Content-Type: " + content_type + "\r\n";
  if (method == "POST") request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return request + extra_headers + "Connection: close\r\n\r\n" + body;
}
std::string Post(const std::string& target, const std::string& body,
                 const std::string& content_type = "text/plain") {
  return Request("POST", target, body, content_type);
}
std::string PostJson(const std::string& target, const std::string& body) {
  return Request("POST", target, body, "application/json");
}

// Invalid UTF-8: a lone continuation byte, an overlong form, a truncated sequence, a surrogate
// and bytes that never occur in UTF-8.
const std::string kInvalidUtf8 =
    "caf\xe9 \x80 hello \xc0\xaf world \xe2\x82 money \xed\xa0\x80 \xff\xfe prize";

// message/rfc822 with multiparts nested `depth` deep, and first a base64 text part of about
// `base64_bytes` bytes that decodes to `base64_bytes * 3 / 4` bytes of words.
std::string MimeBomb(int depth, std::size_t base64_bytes) {
  std::string mail =
      "From: bomb@bomb.example\r\nTo: victim@example.org\r\nSubject: nested parts\r\n"
      "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n"
      "--b0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: "
      "base64\r\n\r\n";
  // "cHJpemUgd2lubmVyIA==" would pad; 24 characters decode to 18 bytes of words exactly.
  const std::string line = "cHJpemUgd2lubmVyIGNsYWlt";  // "prize winner claim"
  std::string encoded;
  while (encoded.size() < base64_bytes) {
    for (int i = 0; i < 3; ++i) encoded += line;
    encoded += "\r\n";
  }
  mail += encoded;
  for (int i = 1; i < depth; ++i) {
    mail += "--b" + std::to_string(i - 1) + "\r\nContent-Type: multipart/mixed; boundary=\"b" +
            std::to_string(i) + "\"\r\n\r\n";
  }
  mail += "--b" + std::to_string(depth - 1) + "\r\nContent-Type: text/plain\r\n\r\ndeep text\r\n";
  for (int i = depth - 1; i >= 0; --i) mail += "--b" + std::to_string(i) + "--\r\n";
  return mail;
}

// Messages attached inside messages, `depth` deep.
std::string NestedMessages(int depth) {
  std::string mail;
  for (int i = 0; i < depth; ++i) {
    mail += "Subject: level " + std::to_string(i) + "\r\nContent-Type: message/rfc822\r\n\r\n";
  }
  return mail + "Subject: innermost\r\n\r\ninnermost words here\r\n";
}

// Many tiny parts in one multipart.
std::string ManyParts(int parts) {
  std::string mail = "From: a@b.example\r\nContent-Type: multipart/mixed; boundary=p\r\n\r\n";
  for (int i = 0; i < parts; ++i)
    mail += "--p\r\nContent-Type: text/plain\r\n\r\nw" + std::to_string(i % 50) + "\r\n";
  return mail + "--p--\r\n";
}

enum class Expect {
  kError,          // A 4xx from `statuses` with a JSON error body (code `code` when given).
  kOk,             // 200 with a JSON body (tokens > 0 when `tokens`).
  kClosed,         // No answer: the server closes the connection.
  kErrorOrClosed,  // Either of the two.
};

struct Row {
  Row(std::string name, std::string bytes, Expect expect, std::vector<int> statuses = {400},
      std::string code = "", bool half_close = false, bool tokens = false)
      : name(std::move(name)),
        bytes(std::move(bytes)),
        expect(expect),
        statuses(std::move(statuses)),
        code(std::move(code)),
        half_close(half_close),
        tokens(tokens) {}

  std::string name;
  std::string bytes;
  Expect expect;
  std::vector<int> statuses;  // kError: the statuses allowed.
  std::string code;           // kError: the error code expected, "" for any.
  bool half_close;            // Half-close after sending (the server reads end of stream).
  bool tokens;                // kOk: the answer must count some tokens.
};

struct Answer {
  std::string raw;
  bool closed = false;
  double seconds = 0;
};

Answer Exchange(unsigned short port, const Row& row, std::chrono::seconds timeout) {
  const auto start = Clock::now();
  RawConnection connection(port);
  try {
    connection.Write(row.bytes);
  } catch (const boost::system::system_error&) {
    // The server may answer early and stop reading (413, 431): its answer is still there.
  }
  if (row.half_close) connection.ShutdownSend();
  RawConnection::Received received = connection.ReadUntilClosedOrTimeout(timeout);
  return {std::move(received.bytes), received.closed,
          std::chrono::duration<double>(Clock::now() - start).count()};
}

// Checks a 4xx JSON error answer; returns false (with failures) when it is not one.
void ExpectError(const Row& row, int status, const std::string& body) {
  std::string allowed;
  for (const int s : row.statuses) allowed.append(" ").append(std::to_string(s));
  EXPECT_NE(std::find(row.statuses.begin(), row.statuses.end(), status), row.statuses.end())
      << "status " << status << " is not one of" << allowed << ": " << body;
  boost::system::error_code ec;
  const json::value value = json::parse(body, ec);
  ASSERT_FALSE(ec) << "the error body is not valid JSON (" << ec.message() << "): " << body;
  const json::object* error =
      value.is_object() && value.as_object().contains("error") && value.at("error").is_object()
          ? &value.at("error").as_object()
          : nullptr;
  ASSERT_NE(error, nullptr) << body;
  ASSERT_TRUE(error->contains("code") && error->at("code").is_string()) << body;
  ASSERT_TRUE(error->contains("message") && error->at("message").is_string()) << body;
  EXPECT_FALSE(error->at("message").as_string().empty()) << body;
  if (!row.code.empty()) {
    EXPECT_EQ(error->at("code").as_string(), row.code) << body;
  }
}

void CheckRow(const DaemonProcess& daemon, const Row& row) {
  // Under the sanitizers a large body takes a while; an idle-timeout close takes 2 s.
  const Answer answer = Exchange(daemon.port(), row, std::chrono::seconds(60));
  EXPECT_TRUE(answer.closed) << "the connection was neither answered and closed nor closed";
  if (answer.raw.empty()) {
    EXPECT_TRUE(row.expect == Expect::kClosed || row.expect == Expect::kErrorOrClosed)
        << "closed without an answer";
    return;
  }
  ASSERT_NE(row.expect, Expect::kClosed)
      << "expected no answer, got: " << answer.raw.substr(0, 300);
  // One answer, Content-Length delimited (Connection: close follows every one of these).
  ASSERT_TRUE(answer.raw.starts_with("HTTP/1.1 ") || answer.raw.starts_with("HTTP/1.0 "))
      << answer.raw.substr(0, 300);
  const std::size_t end_of_head = answer.raw.find("\r\n\r\n");
  ASSERT_NE(end_of_head, std::string::npos) << answer.raw.substr(0, 300);
  const int status = std::stoi(answer.raw.substr(9, 3));
  const std::string body = answer.raw.substr(end_of_head + 4);
  EXPECT_NE(answer.raw.substr(0, end_of_head).find("application/json"), std::string::npos)
      << answer.raw.substr(0, end_of_head);
  if (row.expect == Expect::kOk) {
    ASSERT_EQ(status, 200) << body;
    boost::system::error_code ec;
    const json::value value = json::parse(body, ec);
    ASSERT_FALSE(ec) << "not valid JSON (" << ec.message() << "): " << body;
    ASSERT_TRUE(value.is_object()) << body;
    if (row.tokens) {
      EXPECT_GT(value.at("tokens").to_number<std::int64_t>(), 0) << body;
    }
    return;
  }
  ExpectError(row, status, body);
}

std::vector<Row> Rows() {
  const std::string te_chunked = "Transfer-Encoding: chunked\r\n";
  const auto chunked = [&](const std::string& target, const std::string& body) {
    return "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + te_chunked +
           "Connection: close\r\n\r\n" + body;
  };
  std::string many_headers = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 2000; ++i) many_headers += "X-H" + std::to_string(i) + ": v\r\n";
  many_headers += "Connection: close\r\n\r\n";
  std::string deep_objects;
  for (int i = 0; i < 100000; ++i) deep_objects += "{\"a\":";

  std::vector<Row> rows = {
      // The request line.
      {"request line without version",
       "GET /healthz\r\nHost: localhost\r\n\r\n",
       Expect::kError,
       {400},
       "bad_request"},
      {"request line of binary garbage",
       "\x01\x02\x03 \xff\xfe NOT HTTP\r\n\r\n"s,
       Expect::kError,
       {400},
       "bad_request"},
      {"request line with doubled spaces",
       "GET  /healthz  HTTP/1.1\r\nHost: localhost\r\n\r\n",
       Expect::kError,
       {400},
       "bad_request"},
      {"HTTP/2.0 in an HTTP/1 request line",
       "GET /healthz HTTP/2.0\r\nHost: localhost\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400, 505}},
      {"HTTP/9.9",
       "GET /healthz HTTP/9.9\r\nHost: localhost\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400, 505}},
      {"HTTP/0.9 with a version",
       "GET /healthz HTTP/0.9\r\nHost: localhost\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400, 505}},
      {"HTTPS/1.1",
       "GET /healthz HTTPS/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400, 505}},
      {"absolute-form target",
       "GET http://x/healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400},
       "bad_target"},
      {"bad percent-encoding in the query",
       Post("/train?label=%ZZ", "hello"),
       Expect::kError,
       {400},
       "bad_target"},
      {"unknown method",
       "BREW /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {405},
       "method_not_allowed"},
      // Header fields.
      {"header line without colon",
       "GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400},
       "bad_request"},
      {"space before the colon",
       "GET /healthz HTTP/1.1\r\nHost : x\r\nConnection: close\r\n\r\n",
       Expect::kError,
       {400},
       "bad_request"},
      {"NUL in a header value",
       "GET /healthz HTTP/1.1\r\nHost: x\0y\r\nConnection: close\r\n\r\n"s,
       Expect::kError,
       {400},
       "bad_request"},
      {"huge header field",
       "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + std::string(64 << 10, 'a') +
           "\r\nConnection: close\r\n\r\n",
       Expect::kErrorOrClosed,
       {431},
       "header_too_large"},
      {"2000 header fields", many_headers, Expect::kErrorOrClosed, {431}, "header_too_large"},
      // Body length.
      {"Content-Length over the limit",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
           std::to_string(kMaxBodyBytes + 1) + "\r\n\r\nonly a few bytes",
       Expect::kError,
       {413},
       "payload_too_large"},
      {"Content-Length of 9 GB",
       "POST /train?label=spam HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
       "9000000000\r\n\r\nabc",
       Expect::kError,
       {413},
       "payload_too_large"},
      {"Content-Length beyond 64 bits",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
       "99999999999999999999999\r\n\r\nabc",
       Expect::kError,
       {400, 413}},
      {"Content-Length not a number",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\nConnection: "
       "close\r\n\r\nabc",
       Expect::kError,
       {400},
       "bad_request"},
      {"negative Content-Length",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\nConnection: "
       "close\r\n\r\nabc",
       Expect::kError,
       {400},
       "bad_request"},
      {"two different Content-Lengths",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n"
       "Connection: close\r\n\r\nhello!",
       Expect::kError,
       {400},
       "bad_request"},
      {"Content-Length and chunked together",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n" + te_chunked +
           "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
       Expect::kError,
       {400},
       "bad_request"},
      {"truncated body, then half-close",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nonly ten b",
       Expect::kClosed,
       {},
       "",
       /*half_close=*/true},
      {"truncated body, then silence",
       "POST /train?label=spam&id=never HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
       "100\r\n\r\nonly ten "
       "b",
       Expect::kClosed},
      {"headers cut short, then half-close",
       "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Le",
       Expect::kClosed,
       {},
       "",
       /*half_close=*/true},
      // Chunked encoding.
      {"chunk size not hex",
       chunked("/classify", "zz\r\nhello\r\n0\r\n\r\n"),
       Expect::kError,
       {400},
       "bad_request"},
      {"chunk size overflowing 64 bits",
       chunked("/classify", "FFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n"),
       Expect::kError,
       {400, 413}},
      {"chunk size over the body limit",
       chunked("/classify", "FFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n"),
       Expect::kError,
       {413},
       "payload_too_large"},
      {"chunk data without its CRLF",
       chunked("/classify", "5\r\nhelloXX0\r\n\r\n"),
       Expect::kError,
       {400},
       "bad_request"},
      {"chunked body cut short, then half-close",
       chunked("/classify", "10\r\nhello"),
       Expect::kClosed,
       {},
       "",
       /*half_close=*/true},
      {"chunks over the body limit in total",
       chunked("/classify",
               [] {
                 std::string chunks;
                 for (int i = 0; i < 9; ++i)
                   chunks += "100000\r\n" + std::string(0x100000, 'a') + "\r\n";
                 return chunks + "0\r\n\r\n";
               }()),
       Expect::kError,
       {413},
       "payload_too_large"},
      // Invalid UTF-8 in messages is accepted and tokenized.
      {"invalid UTF-8 in a /train body",
       Post("/train?label=spam&id=utf8-raw", kInvalidUtf8),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"invalid UTF-8 in a /classify body",
       Post("/classify?explain=20", kInvalidUtf8),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"invalid UTF-8 in mail headers, explained",
       Post("/classify?explain=1000",
            "From: \"\xff\xfe\" <\xff\xfe@ex\xff"
            "ample.com>\r\nSubject: \xc3\x28 prize \xe2\x82\r\n"
            "Content-Type: text/plain; charset=\xff\xfe\r\n\r\n" +
                kInvalidUtf8,
            "message/rfc822"),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"invalid UTF-8 in a JSON string",
       PostJson("/classify", "{\"text\":\"caf\xe9\"}"),
       Expect::kError,
       {400},
       "invalid_json"},
      // Labels and ids.
      {"invalid UTF-8 in a label",
       Post("/train?label=sp%FFam&id=x", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"newline in a label",
       Post("/train?label=sp%0Aam&id=x", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"NUL in a label",
       Post("/train?label=spam%00&id=x", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"space in a label",
       Post("/train?label=sp%20am", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"slash in a label",
       Post("/train?label=spam/ham", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"encoded slash in a label",
       Post("/train?label=..%2F..%2Fetc", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"unicode label",
       Post("/train?label=sp%C3%A4m", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"65-character label",
       Post("/train?label=" + std::string(65, 'a'), "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"empty label", Post("/train?label=", "hello"), Expect::kError, {400}, "invalid_argument"},
      {"label of the wrong JSON type",
       PostJson("/train", R"({"text":"hello","label":["spam"]})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"NUL in an id",
       Post("/train?label=spam&id=a%00b", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"escape character in an id",
       Post("/forget?id=a%1Bb", ""),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"control character in a JSON id",
       PostJson("/train", R"({"text":"hello","label":"spam","id":"a\u0007b"})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"257-byte id",
       Post("/train?label=spam&id=" + std::string(257, 'i'), "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"100 KB id in the query",
       Post("/train?label=spam&id=" + std::string(100 << 10, 'i'), "hello"),
       Expect::kError,
       {400, 414, 431}},
      {"100 KB id in a JSON body",
       PostJson("/train",
                R"({"text":"hello","label":"spam","id":")" + std::string(100 << 10, 'i') + "\"}"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"100 KB id to forget",
       PostJson("/forget", R"({"id":")" + std::string(100 << 10, 'i') + "\"}"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"unknown query parameter of invalid UTF-8",
       Post("/classify?%FF%FE=1", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"repeated query parameter of invalid UTF-8",
       Post("/classify?a%FF=1&a%FF=2", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      // JSON of the wrong shape.
      {"JSON text is a number",
       PostJson("/train", R"({"text":5,"label":"spam"})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON id is null",
       PostJson("/train", R"({"text":"hello","label":"spam","id":null})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON id is a number",
       PostJson("/forget", R"({"id":12})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON explain is a string",
       PostJson("/classify", R"({"text":"hello","explain":"3"})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON explain is negative",
       PostJson("/classify", R"({"text":"hello","explain":-1})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON explain is a fraction",
       PostJson("/classify", R"({"text":"hello","explain":2.5})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON explain too large",
       PostJson("/classify", R"({"text":"hello","explain":1e300})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"query explain beyond 64 bits",
       Post("/classify?explain=99999999999999999999999", "hello"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"JSON body is an array",
       PostJson("/classify", R"(["hello"])"),
       Expect::kError,
       {400},
       "invalid_json"},
      {"JSON body is a string",
       PostJson("/train", R"("hello")"),
       Expect::kError,
       {400},
       "invalid_json"},
      {"JSON with trailing garbage",
       PostJson("/classify", R"({"text":"hello"} x)"),
       Expect::kError,
       {400},
       "invalid_json"},
      {"JSON with a lone surrogate",
       PostJson("/train", R"({"text":"a","label":"spam","id":"\ud800"})"),
       Expect::kError,
       {400}},
      {"unknown JSON field",
       PostJson("/classify", R"({"text":"hello","txet":"x"})"),
       Expect::kError,
       {400},
       "invalid_argument"},
      {"100k nested arrays",
       PostJson("/classify", std::string(100000, '[')),
       Expect::kError,
       {400},
       "invalid_json"},
      {"100k nested arrays, closed",
       PostJson("/train", std::string(100000, '[') + std::string(100000, ']')),
       Expect::kError,
       {400},
       "invalid_json"},
      {"100k nested objects",
       PostJson("/forget", deep_objects),
       Expect::kError,
       {400},
       "invalid_json"},
      // Mail built to make the parser work hard.
      {"multipart nested 1000 deep with a 3 MB base64 part, classify",
       Post("/classify", MimeBomb(1000, 3 << 20), "message/rfc822"),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"multipart nested 1000 deep with a 3 MB base64 part, train",
       Post("/train?label=spam&id=bomb", MimeBomb(1000, 3 << 20), "message/rfc822"),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"messages attached 1000 deep",
       Post("/classify", NestedMessages(1000), "message/rfc822"),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"messages attached 50000 deep",
       Post("/train?label=ham&id=nested", NestedMessages(50000), "message/rfc822"),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"20000 parts in one multipart",
       Post("/classify", ManyParts(20000), "message/rfc822"),
       Expect::kOk,
       {},
       "",
       false,
       true},
      {"8 MB without whitespace", Post("/classify", std::string(kMaxBodyBytes - 1024, 'x')),
       Expect::kOk},
  };
  return rows;
}

TEST(HostileRequestsTest, EveryBadRequestGetsAClearAnswerAndTheDaemonKeepsServing) {
  // The idle timeout also bounds the time to send one request: a daemon that waits 2 s answers
  // the rows that must be waited out (a request left unfinished, with the connection open)
  // quickly, but a sanitizer build on a busy machine can take longer than that to read a body of
  // megabytes, even one it refuses at the limit. Every other row goes to a second daemon that
  // waits 60 s: each of those ends its request or its connection, so none is waited out.
  TempDir dir;
  TempDir patient_dir;
  DaemonProcess daemon = StartDaemon(dir);
  DaemonProcess patient = StartDaemon(patient_dir, /*idle_timeout_seconds=*/60);
  TrainSeed(daemon.port());
  TrainSeed(patient.port());
  for (const Row& row : Rows()) {
    SCOPED_TRACE(row.name);
    const bool waited_out = row.expect == Expect::kClosed && !row.half_close;
    const DaemonProcess& target = waited_out ? daemon : patient;
    const auto start = Clock::now();
    CheckRow(target, row);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    // Only the rows the server must wait out take the idle timeout; none takes much longer.
    EXPECT_LT(seconds, kIdleTimeoutSeconds + 20.0);
    ASSERT_EQ(kill(target.pid(), 0), 0) << "the daemon died\n" << target.Log();
    ExpectHealthy(target);
  }
  // Nothing above was a fault of the server.
  for (DaemonProcess* each : {&daemon, &patient}) {
    EXPECT_EQ(each->Log().find("internal error"), std::string::npos) << each->Log();
    EXPECT_EQ(each->Terminate(), 0) << each->Log();
  }
}

TEST(HostileRequestsTest, ASilentTruncatedBodyIsClosedAtTheIdleTimeout) {
  TempDir dir;
  DaemonProcess daemon = StartDaemon(dir);
  RawConnection connection(daemon.port());
  const auto start = Clock::now();
  connection.Write(
      "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nten bytes.");
  const RawConnection::Received received =
      connection.ReadUntilClosedOrTimeout(std::chrono::seconds(kIdleTimeoutSeconds + 10));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(received.closed);
  EXPECT_EQ(received.bytes, "");
  EXPECT_GT(seconds, kIdleTimeoutSeconds - 0.5) << "closed before the idle timeout";
  EXPECT_LT(seconds, kIdleTimeoutSeconds + 5.0);
  ExpectHealthy(daemon);
}

// Error messages quote the client's query keys: whatever bytes those held, the error body is
// valid JSON, invalid sequences show as U+FFFD and valid ones stay as they were.
TEST(HostileRequestsTest, ErrorBodiesAreValidUtf8WhateverTheQueryHeld) {
  TempDir dir;
  DaemonProcess daemon = StartDaemon(dir);
  const std::pair<std::string, std::string> cases[] = {
      {"%C0%AF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                                // Overlong '/'.
      {"%ED%A0%80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},                 // A surrogate.
      {"%F4%90%80%80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // Over U+10FFFF.
      {"x%E2%82", "x\xEF\xBF\xBD"},  // Cut short at the end: one maximal subpart, one U+FFFD.
      {"%80%BF", "\xEF\xBF\xBD\xEF\xBF\xBD"},              // Stray continuation bytes.
      {"%C3%A4%F0%9F%98%80", "\xC3\xA4\xF0\x9F\x98\x80"},  // Valid: kept.
  };
  for (const auto& [key, shown] : cases) {
    SCOPED_TRACE(key);
    HttpClient client(daemon.port());
    const auto response = client.Send(http::verb::post, "/classify?" + key + "=1", "hello");
    EXPECT_EQ(response.result(), http::status::bad_request);
    boost::system::error_code ec;
    const json::value body = json::parse(response.body(), ec);
    ASSERT_FALSE(ec) << response.body();
    EXPECT_EQ(body.at("error").at("message").as_string(),
              "unknown query parameter '" + shown + "'");
  }
  ExpectHealthy(daemon);
}

// An id that is not UTF-8 cannot be echoed in a JSON answer (RFC 8259 requires UTF-8): the
// daemon must refuse it rather than answer 200 with a body no JSON parser accepts.
TEST(HostileRequestsTest, AnIdThatIsNotUtf8IsRefused) {
  TempDir dir;
  DaemonProcess daemon = StartDaemon(dir);
  for (const std::string& request :
       {Post("/train?label=spam&id=%FF%FEid", "hello"), Post("/forget?id=caf%E9", "")}) {
    Row row{"id of invalid UTF-8", request, Expect::kError, {400}, "invalid_argument"};
    SCOPED_TRACE(request.substr(0, request.find('\r')));
    CheckRow(daemon, row);
    ExpectHealthy(daemon);
  }
}

// A plain TCP socket, for tests that need many of them or byte-by-byte control.
class Socket {
 public:
  explicit Socket(unsigned short port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    timeval timeout{5, 0};  // Bounds connect (and blocking sends).
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) Close();
  }
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&&) = delete;
  ~Socket() { Close(); }

  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  [[nodiscard]] int fd() const { return fd_; }
  bool Send(std::string_view bytes) const {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // True when the server has closed the connection (end of stream or reset), without waiting.
  [[nodiscard]] bool ClosedByPeer() const {
    char byte;
    const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }
  // Reads until `needle` arrives, the peer closes, or `timeout` passes.
  std::string ReadUntil(std::string_view needle, std::chrono::milliseconds timeout) const {
    std::string received;
    const auto deadline = Clock::now() + timeout;
    while (received.find(needle) == std::string::npos && Clock::now() < deadline) {
      pollfd poll_fd{fd_, POLLIN, 0};
      if (poll(&poll_fd, 1, 50) <= 0) continue;
      char buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      received.append(buffer, static_cast<std::size_t>(n));
    }
    return received;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// The whole request, header and body, must come within the idle timeout: a client that sends its
// header slowly and then its body slowly is closed once the timeout has passed since it began,
// not given the timeout again for its body.
TEST(HostileRequestsTest, AHeaderAndBodySentSlowlyShareOneDeadline) {
  TempDir dir;
  DaemonProcess daemon = StartDaemon(dir);  // idle timeout: 2 s.
  const std::string body(100, 'x');
  const std::string request = "POST /classify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n";
  Socket slow(daemon.port());
  ASSERT_TRUE(slow.ok());
  const auto start = Clock::now();
  // The header over about 1.5 s, then the body a byte every 100 ms.
  const std::string all = request + body;
  const double per_header_byte = 1.5 / static_cast<double>(request.size());
  std::optional<double> closed_after;
  for (std::size_t sent = 0; sent < all.size(); ++sent) {
    if (slow.ClosedByPeer() || !slow.Send(all.substr(sent, 1))) {
      closed_after = std::chrono::duration<double>(Clock::now() - start).count();
      break;
    }
    std::this_thread::sleep_for(sent < request.size()
                                    ? std::chrono::duration<double>(per_header_byte)
                                    : std::chrono::duration<double>(0.1));
  }
  ASSERT_TRUE(closed_after.has_value()) << "never closed";
  EXPECT_LT(*closed_after, kIdleTimeoutSeconds + 1.0) << "the body got a deadline of its own";
}

TEST(HostileRequestsTest, SlowlorisConnectionsAreClosedWhileOthersAreServed) {
  TempDir dir;
  DaemonProcess daemon = StartDaemon(dir);
  TrainSeed(daemon.port());

  // A request header that would take 60 s at one byte every 200 ms.
  const std::string slow_request =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(300, 's') + "\r\n\r\n";
  constexpr int kSlowClients = 6;
  std::vector<Socket> slow;
  for (int i = 0; i < kSlowClients; ++i) {
    slow.emplace_back(daemon.port());
    ASSERT_TRUE(slow.back().ok());
  }

  // Meanwhile another client classifies, and must keep getting 200s quickly.
  std::atomic<bool> done = false;
  std::atomic<int> served = 0;
  std::atomic<int> failed = 0;
  std::atomic<double> slowest = 0;
  std::thread classifier([&] {
    try {
      HttpClient client(daemon.port());
      while (!done) {
        const auto start = Clock::now();
        const auto response = client.Send(http::verb::post, "/classify", "free prize meeting");
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (seconds > slowest) slowest = seconds;
        (response.result() == http::status::ok ? served : failed)++;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    } catch (const std::exception&) {
      ++failed;
    }
  });

  const auto start = Clock::now();
  std::vector<std::optional<double>> closed_after(kSlowClients);
  for (std::size_t sent = 0; sent < slow_request.size(); ++sent) {
    bool any_open = false;
    for (int i = 0; i < kSlowClients; ++i) {
      if (closed_after[i]) continue;
      if (slow[i].ClosedByPeer() || !slow[i].Send(slow_request.substr(sent, 1))) {
        closed_after[i] = std::chrono::duration<double>(Clock::now() - start).count();
      } else {
        any_open = true;
      }
    }
    if (!any_open || Clock::now() - start > std::chrono::seconds(kIdleTimeoutSeconds + 15)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  done = true;
  classifier.join();

  for (int i = 0; i < kSlowClients; ++i) {
    ASSERT_TRUE(closed_after[i].has_value()) << "slow connection " << i << " is still open";
    // Closed at the idle timeout (2 s), noticed at the next byte (200 ms later) at most.
    EXPECT_LT(*closed_after[i], kIdleTimeoutSeconds + 3.0) << "slow connection " << i;
    EXPECT_GT(*closed_after[i], kIdleTimeoutSeconds - 0.5) << "slow connection " << i;
  }
  EXPECT_EQ(failed, 0);
  EXPECT_GE(served, 10);
  EXPECT_LT(slowest, 1.0) << "a /classify took " << slowest << " s";
  ExpectHealthy(daemon);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

// Raises this process's descriptor limit as far as allowed (a daemon started after inherits it);
// returns the new limit, 0 when it cannot be read or set.
rlim_t RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  return limit.rlim_cur;
}

TEST(HostileRequestsTest, TenThousandIdleConnectionsDoNotStopService) {
  const rlim_t descriptors = RaiseDescriptorLimit();
  ASSERT_GT(descriptors, 0u);
  // Both sides hold one descriptor per connection, plus a reserve for everything else.
  constexpr std::size_t kTarget = 10000;
  const std::size_t target =
      std::min<std::size_t>(kTarget, descriptors > 256 ? descriptors - 256 : 0);

  TempDir dir;
  DaemonProcess daemon = StartDaemon(dir, /*idle_timeout_seconds=*/300);
  TrainSeed(daemon.port());

  std::vector<Socket> idle;
  idle.reserve(target);
  const auto start = Clock::now();
  while (idle.size() < target && Clock::now() - start < std::chrono::seconds(90)) {
    Socket socket(daemon.port());
    if (!socket.ok()) break;
    idle.push_back(std::move(socket));
  }
  const double open_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("[          ] opened %zu idle connections of %zu wanted (limit %llu) in %.1f s\n",
              idle.size(), kTarget, static_cast<unsigned long long>(descriptors), open_seconds);
  ASSERT_EQ(idle.size(), target) << "could not open the connections the limit allows";

  // The newest connection is served: the daemon has accepted every one before it.
  ASSERT_TRUE(idle.back().Send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_NE(idle.back().ReadUntil("\r\n\r\n", std::chrono::seconds(30)).find("200 OK"),
            std::string::npos);

  // A fresh client is answered quickly.
  {
    const auto asked = Clock::now();
    HttpClient client(daemon.port());
    EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
    const auto response = client.Send(http::verb::post, "/classify", "free prize meeting");
    EXPECT_EQ(response.result(), http::status::ok) << response.body();
    const double seconds = std::chrono::duration<double>(Clock::now() - asked).count();
    EXPECT_LT(seconds, 2.0) << "a fresh client waited " << seconds << " s";
  }

  // None of the idle connections was dropped.
  std::size_t dropped = 0;
  for (const Socket& socket : idle) dropped += socket.ClosedByPeer() ? 1 : 0;
  EXPECT_EQ(dropped, 0u);

  idle.clear();
  ExpectHealthy(daemon);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

TEST(HostileRequestsTest, StalledRequestsHoldOnlyWhatTheyDeclared) {
  // A connection's read buffer grows with what its client has sent or declared: a client that
  // sends the first bytes of a request, or a header that declares a small body, and then stalls,
  // must not make the daemon hold room for a large request (16 KiB and more). The daemon's own
  // gauges count the connections and their buffers' bytes.
  constexpr std::size_t kConnections = 500;
  ASSERT_GT(RaiseDescriptorLimit(), 5 * kConnections + 256);

  TempDir dir;
  // Every chunked body is admitted (at the body limit, 8 MiB each), not refused as overload.
  DaemonProcess daemon =
      StartTestDaemon(dir.Join("model"), {"--idle-timeout-seconds", "300", "--max-header-bytes",
                                          std::to_string(kMaxHeaderBytes), "--max-body-bytes",
                                          std::to_string(kMaxBodyBytes), "--max-in-flight-bytes",
                                          std::to_string(2 * kConnections * kMaxBodyBytes)});
  TrainSeed(daemon.port());
  const unsigned short port = daemon.port();
  // One connection asks for the gauges throughout: it is counted in each reading. It is the only
  // one once the daemon has seen the seed's connection close (until then that one is counted).
  HttpClient metrics(port);
  double idle_connections = MetricValue(metrics, "nbspamd_http_connections");
  for (const auto until = Clock::now() + std::chrono::seconds(10);
       idle_connections != 1 && Clock::now() < until;
       idle_connections = MetricValue(metrics, "nbspamd_http_connections")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(idle_connections, 1);
  const double idle_buffers = MetricValue(metrics, "nbspamd_http_read_buffer_bytes");

  const std::string healthz = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
  const std::string post = "POST /classify HTTP/1.1\r\nHost: localhost\r\n";
  struct Kind {
    const char* what;
    std::function<bool(const Socket&)> send;
    double least, most;  // Bytes a connection.
  };
  const Kind kinds[] = {
      {"one byte of a request line", [](const Socket& s) { return s.Send("P"); }, 512, 1024},
      {"a request answered, then one byte of the next",
       [&](const Socket& s) {
         return s.Send(healthz) &&
                s.ReadUntil("\"ok\"", std::chrono::seconds(10)).find("200 OK") !=
                    std::string::npos &&
                s.Send("P");
       },
       512, 1024},
      {"a header declaring a 10-byte body, then 2 bytes of it",
       [&](const Socket& s) { return s.Send(post + "Content-Length: 10\r\n\r\nab"); }, 512, 1024},
      {"a chunked body's first chunk of 2 bytes",
       [&](const Socket& s) {
         return s.Send(post + "Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n");
       },
       512, 1024},
      // Room is given where the client declared it: the rest of a 100 KB body, 64 KiB at a read.
      {"a header declaring a 100,000-byte body, then 1,000 bytes of it",
       [&](const Socket& s) {
         return s.Send(post + "Content-Length: 100000\r\n\r\n" + std::string(1000, 'a'));
       },
       64 << 10, 80 << 10},
  };
  std::vector<Socket> held;
  held.reserve(std::size(kinds) * kConnections);
  for (const Kind& kind : kinds) {
    const double buffers_before = MetricValue(metrics, "nbspamd_http_read_buffer_bytes");
    for (std::size_t i = 0; i < kConnections; ++i) {
      Socket socket(port);
      ASSERT_TRUE(socket.ok()) << kind.what;
      ASSERT_TRUE(kind.send(socket)) << kind.what;
      held.push_back(std::move(socket));
    }
    // The daemon has read what each sent once the gauge stops moving.
    double buffers = MetricValue(metrics, "nbspamd_http_read_buffer_bytes");
    for (int i = 0; i < 50; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const double now = MetricValue(metrics, "nbspamd_http_read_buffer_bytes");
      if (now == buffers && i >= 2) break;
      buffers = now;
    }
    const double per_connection = (buffers - buffers_before) / kConnections;
    std::printf("[          ] %s: %.0f bytes a connection\n", kind.what, per_connection);
    EXPECT_GE(per_connection, kind.least) << kind.what;
    EXPECT_LE(per_connection, kind.most) << kind.what;
  }
  EXPECT_EQ(MetricValue(metrics, "nbspamd_http_connections"),
            idle_connections + static_cast<double>(held.size()));
  // None was answered or closed: each is still waiting for the rest of its request.
  std::size_t answered = 0;
  for (const Socket& socket : held) {
    char byte;
    const bool waiting = recv(socket.fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) == -1 &&
                         (errno == EAGAIN || errno == EWOULDBLOCK);
    answered += waiting ? 0 : 1;
  }
  EXPECT_EQ(answered, 0u);
  held.clear();
  // Once they are gone, so is what they held. A connection gives its buffer back before it is
  // gone, so the two gauges settle one after the other.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while ((MetricValue(metrics, "nbspamd_http_connections") != idle_connections ||
          MetricValue(metrics, "nbspamd_http_read_buffer_bytes") != idle_buffers) &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(MetricValue(metrics, "nbspamd_http_connections"), idle_connections);
  EXPECT_EQ(MetricValue(metrics, "nbspamd_http_read_buffer_bytes"), idle_buffers);
  ExpectHealthy(daemon);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}
}  // namespace
}  // namespace nbspamd::testing
