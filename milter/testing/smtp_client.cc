#include "milter/testing/smtp_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <optional>
#include <string_view>

namespace nbspamd::milter::testing {

namespace {

namespace net = boost::asio;
using net::ip::tcp;

// One SMTP connection; each step runs the io_context until it completes or its deadline passes.
class Connection {
 public:
  explicit Connection(std::chrono::milliseconds step_timeout) : step_timeout_(step_timeout) {}

  std::expected<void, Error> Connect(std::uint16_t port) {
    boost::system::error_code result = net::error::would_block;
    socket_.async_connect(tcp::endpoint(net::ip::make_address_v4("127.0.0.1"), port),
                          [&](boost::system::error_code ec) { result = ec; });
    if (auto done = Run(result, "connect"); !done) return done;
    if (result) return Fail("connect to 127.0.0.1:" + std::to_string(port), result);
    return {};
  }

  std::expected<void, Error> Send(std::string_view bytes) {
    boost::system::error_code result = net::error::would_block;
    net::async_write(socket_, net::buffer(bytes.data(), bytes.size()),
                     [&](boost::system::error_code ec, std::size_t) { result = ec; });
    if (auto done = Run(result, "send"); !done) return done;
    if (result) return Fail("send", result);
    return {};
  }

  // Reads one reply, all its lines ("250-..." continues, "250 ..." ends it).
  std::expected<SmtpReply, Error> ReadReply() {
    SmtpReply reply;
    while (true) {
      boost::system::error_code result = net::error::would_block;
      net::async_read_until(socket_, net::dynamic_buffer(input_), "\r\n",
                            [&](boost::system::error_code ec, std::size_t) { result = ec; });
      if (auto done = Run(result, "read a reply"); !done) return std::unexpected(done.error());
      if (result) return std::unexpected(Fail("read a reply", result).error());
      const std::size_t end = input_.find("\r\n");
      const std::string line = input_.substr(0, end);
      input_.erase(0, end + 2);
      if (line.size() < 3 || line.find_first_not_of("0123456789") < 3 ||
          (line.size() > 3 && line[3] != ' ' && line[3] != '-')) {
        return MakeError(ErrorCode::kUnavailable, "not an SMTP reply: " + line);
      }
      const int code = std::stoi(line.substr(0, 3));
      if (reply.code != 0 && code != reply.code) {
        return MakeError(ErrorCode::kUnavailable, "reply code changed within a reply: " + line);
      }
      reply.code = code;
      if (!reply.text.empty()) reply.text += '\n';
      if (line.size() > 4) reply.text += line.substr(4);
      if (line.size() == 3 || line[3] == ' ') return reply;
    }
  }

  void Close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  // Runs the io_context until `result` is set by the pending operation, at most step_timeout_.
  std::expected<void, Error> Run(const boost::system::error_code& result, const char* step) {
    io_.restart();
    io_.run_for(step_timeout_);
    if (result == net::error::would_block) {
      Close();  // Cancels the operation; let its handler run before `result` goes away.
      io_.restart();
      io_.run();
      return MakeError(ErrorCode::kUnavailable, std::string("SMTP: no answer in time to ") + step);
    }
    return {};
  }

  static std::unexpected<Error> Fail(const std::string& step, boost::system::error_code ec) {
    return MakeError(ErrorCode::kUnavailable, "SMTP: cannot " + step + ": " + ec.message());
  }

  std::chrono::milliseconds step_timeout_;
  net::io_context io_;
  tcp::socket socket_{io_};
  std::string input_;
};

// `message` with CRLF line ends, dot-stuffed, ending in CRLF, then the "." line.
std::string DataSection(const std::string& message) {
  std::string out;
  out.reserve(message.size() + message.size() / 32 + 8);
  bool line_start = true;
  for (std::size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (line_start && c == '.') out.push_back('.');
    line_start = false;
    if (c == '\n') {
      if (out.empty() || out.back() != '\r') out.push_back('\r');
      out.push_back('\n');
      line_start = true;
      continue;
    }
    out.push_back(c);
  }
  if (!line_start) out += "\r\n";
  out += ".\r\n";
  return out;
}

}  // namespace

std::expected<SmtpOutcome, Error> SendMail(std::uint16_t port, const SmtpEnvelope& envelope,
                                           const std::string& message,
                                           std::chrono::milliseconds step_timeout) {
  Connection connection(step_timeout);
  if (auto connected = connection.Connect(port); !connected) {
    return std::unexpected(connected.error());
  }
  // Sends `command` (nothing for the banner), reads the reply; a reply outside `ok` ends the
  // transaction with that outcome.
  std::optional<SmtpOutcome> ended;
  const auto step = [&](const std::string& command, const char* stage, int ok_low,
                        int ok_high) -> std::expected<SmtpReply, Error> {
    if (!command.empty()) {
      if (auto sent = connection.Send(command); !sent) return std::unexpected(sent.error());
    }
    auto reply = connection.ReadReply();
    if (!reply) return reply;
    if (reply->code < ok_low || reply->code > ok_high) ended = SmtpOutcome{*reply, stage};
    return reply;
  };
  const std::vector<std::pair<std::string, std::string>> commands = [&] {
    std::vector<std::pair<std::string, std::string>> list;
    list.emplace_back("", "CONNECT");
    list.emplace_back("EHLO " + envelope.helo + "\r\n", "EHLO");
    list.emplace_back("MAIL FROM:<" + envelope.sender + ">\r\n", "MAIL");
    for (const std::string& recipient : envelope.recipients) {
      list.emplace_back("RCPT TO:<" + recipient + ">\r\n", "RCPT");
    }
    return list;
  }();
  for (const auto& [command, stage] : commands) {
    auto reply = step(command, stage.c_str(), 200, 299);
    if (!reply) return std::unexpected(reply.error());
    if (ended) break;
  }
  if (!ended) {
    auto reply = step("DATA\r\n", "DATA", 354, 354);
    if (!reply) return std::unexpected(reply.error());
  }
  if (!ended) {
    auto reply = step(DataSection(message), "END", 200, 299);
    if (!reply) return std::unexpected(reply.error());
    if (!ended) ended = SmtpOutcome{*reply, "END"};
  }
  // The outcome is known; QUIT is a courtesy whose failure changes nothing.
  if (connection.Send("QUIT\r\n")) (void)connection.ReadReply();
  connection.Close();
  return *ended;
}

}  // namespace nbspamd::milter::testing
