#include "tests/support/imap_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <utility>

namespace nbspamd::testing {
namespace {

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string WithCrlf(const std::string& message) {
  std::string out;
  out.reserve(message.size() + message.size() / 32);
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (message[i] == '\n' && (i == 0 || message[i - 1] != '\r')) out.push_back('\r');
    out.push_back(message[i]);
  }
  return out;
}

}  // namespace

std::string UidSet(const std::vector<std::uint32_t>& uids) {
  std::string set;
  for (std::uint32_t uid : uids) {
    if (!set.empty()) set += ',';
    set += std::to_string(uid);
  }
  return set;
}

std::expected<ImapClient, std::string> ImapClient::Connect(std::uint16_t port,
                                                           std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::unexpected(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return std::unexpected("IMAP: cannot connect to 127.0.0.1:" + std::to_string(port) + ": " +
                           why);
  }
  ImapClient client(fd, timeout);
  auto greeting = client.ReadLine();
  if (!greeting) return std::unexpected(greeting.error());
  if (!greeting->starts_with("* OK")) return std::unexpected("IMAP greeting: " + *greeting);
  return client;
}

ImapClient::ImapClient(ImapClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      timeout_(other.timeout_),
      input_(std::move(other.input_)),
      next_tag_(other.next_tag_) {}

ImapClient::~ImapClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::expected<void, std::string> ImapClient::Send(const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(std::string("IMAP: send: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }
  return {};
}

std::expected<void, std::string> ImapClient::Fill() {
  pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
  const int polled = ::poll(&ready, 1, static_cast<int>(timeout_.count()));
  if (polled == 0) return std::unexpected("IMAP: no answer in time");
  if (polled < 0) return std::unexpected(std::string("IMAP: poll: ") + std::strerror(errno));
  char buffer[16384];
  const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n == 0) return std::unexpected("IMAP: the server closed the connection");
  if (n < 0) return std::unexpected(std::string("IMAP: recv: ") + std::strerror(errno));
  input_.append(buffer, static_cast<std::size_t>(n));
  return {};
}

std::expected<std::string, std::string> ImapClient::ReadRawLine() {
  std::size_t end;
  while ((end = input_.find("\r\n")) == std::string::npos) {
    if (auto filled = Fill(); !filled) return std::unexpected(filled.error());
  }
  std::string line = input_.substr(0, end);
  input_.erase(0, end + 2);
  return line;
}

std::expected<std::string, std::string> ImapClient::ReadBytes(std::size_t count) {
  while (input_.size() < count) {
    if (auto filled = Fill(); !filled) return std::unexpected(filled.error());
  }
  std::string bytes = input_.substr(0, count);
  input_.erase(0, count);
  return bytes;
}

std::expected<std::string, std::string> ImapClient::ReadLine() {
  auto line = ReadRawLine();
  if (!line) return line;
  // "... {N}" announces N bytes of literal, after which the line goes on.
  while (line->ends_with('}')) {
    const std::size_t open = line->rfind('{');
    if (open == std::string::npos) break;
    const std::string digits = line->substr(open + 1, line->size() - open - 2);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) break;
    auto literal = ReadBytes(std::stoul(digits));
    if (!literal) return literal;
    auto rest = ReadRawLine();
    if (!rest) return rest;
    *line += "\r\n" + *literal + *rest;
  }
  return line;
}

std::expected<ImapResponse, std::string> ImapClient::Command(const std::string& command) {
  const std::string tag = "t" + std::to_string(next_tag_++);
  if (auto sent = Send(tag + " " + command + "\r\n"); !sent) {
    return std::unexpected(sent.error());
  }
  ImapResponse response;
  while (true) {
    auto line = ReadLine();
    if (!line) return std::unexpected(command + ": " + line.error());
    if (line->starts_with(tag + " ")) {
      response.status = line->substr(tag.size() + 1);
      if (!response.status.starts_with("OK")) {
        return std::unexpected(command + ": " + response.status);
      }
      return response;
    }
    response.untagged.push_back(std::move(*line));
  }
}

std::expected<void, std::string> ImapClient::Login(const std::string& user,
                                                   const std::string& password) {
  auto done = Command("LOGIN " + Quoted(user) + " " + Quoted(password));
  if (!done) return std::unexpected(done.error());
  return {};
}

std::expected<void, std::string> ImapClient::Select(const std::string& mailbox) {
  auto done = Command("SELECT " + Quoted(mailbox));
  if (!done) return std::unexpected(done.error());
  return {};
}

std::expected<void, std::string> ImapClient::Append(const std::string& mailbox,
                                                    const std::string& message) {
  const std::string literal = WithCrlf(message);
  const std::string tag = "t" + std::to_string(next_tag_++);
  const std::string command = "APPEND " + Quoted(mailbox);
  if (auto sent = Send(tag + " " + command + " {" + std::to_string(literal.size()) + "}\r\n");
      !sent) {
    return sent;
  }
  auto go_ahead = ReadLine();
  if (!go_ahead) return std::unexpected(command + ": " + go_ahead.error());
  if (!go_ahead->starts_with("+")) return std::unexpected(command + ": " + *go_ahead);
  if (auto sent = Send(literal + "\r\n"); !sent) return sent;
  while (true) {
    auto line = ReadLine();
    if (!line) return std::unexpected(command + ": " + line.error());
    if (!line->starts_with(tag + " ")) continue;
    if (!line->starts_with(tag + " OK")) return std::unexpected(command + ": " + *line);
    return {};
  }
}

std::expected<std::vector<std::uint32_t>, std::string> ImapClient::UidSearch(
    const std::string& criteria) {
  auto done = Command("UID SEARCH " + criteria);
  if (!done) return std::unexpected(done.error());
  std::vector<std::uint32_t> uids;
  for (const std::string& line : done->untagged) {
    if (!line.starts_with("* SEARCH")) continue;
    std::istringstream numbers(line.substr(8));
    std::uint32_t uid;
    while (numbers >> uid) uids.push_back(uid);
  }
  return uids;
}

std::expected<std::string, std::string> ImapClient::UidFetchMessage(std::uint32_t uid) {
  auto done = Command("UID FETCH " + std::to_string(uid) + " BODY.PEEK[]");
  if (!done) return std::unexpected(done.error());
  for (const std::string& line : done->untagged) {
    const std::size_t literal = line.find("BODY[] {");
    if (literal == std::string::npos) continue;
    const std::size_t start = line.find("\r\n", literal);
    const std::size_t size = std::stoul(line.substr(literal + 8));
    return line.substr(start + 2, size);
  }
  return std::unexpected("UID FETCH " + std::to_string(uid) + ": no such message");
}

std::expected<void, std::string> ImapClient::UidMove(const std::string& uid_set,
                                                     const std::string& mailbox) {
  auto done = Command("UID MOVE " + uid_set + " " + Quoted(mailbox));
  if (!done) return std::unexpected(done.error());
  return {};
}

void ImapClient::Logout() {
  if (fd_ < 0) return;
  (void)Command("LOGOUT");
  ::close(fd_);
  fd_ = -1;
}

}  // namespace nbspamd::testing
