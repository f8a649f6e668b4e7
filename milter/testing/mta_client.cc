#include "milter/testing/mta_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "milter/protocol.h"

namespace nbspamd::milter::testing {

namespace {

void AppendUint32(std::uint32_t value, std::string& out) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

std::string Strings(std::initializer_list<std::string_view> strings) {
  std::string out;
  for (std::string_view s : strings) {
    out.append(s);
    out.push_back('\0');
  }
  return out;
}

}  // namespace

std::string Packet(char code, std::string_view data) {
  std::string out;
  AppendUint32(static_cast<std::uint32_t>(data.size() + 1), out);
  out.push_back(code);
  out.append(data);
  return out;
}

std::string OptionNegotiationPacket(std::uint32_t version, std::uint32_t actions,
                                    std::uint32_t protocol) {
  std::string data;
  AppendUint32(version, data);
  AppendUint32(actions, data);
  AppendUint32(protocol, data);
  return Packet(kCmdOptionNegotiation, data);
}

std::string MacroPacket(char for_command,
                        const std::vector<std::pair<std::string, std::string>>& macros) {
  std::string data(1, for_command);
  for (const auto& [name, value] : macros) data += Strings({name, value});
  return Packet(kCmdMacro, data);
}

std::string MailPacket(std::string_view sender) {
  return Packet(kCmdMail, Strings({sender, "SIZE=100"}));
}

std::string RcptPacket(std::string_view recipient) {
  return Packet(kCmdRcpt, Strings({recipient}));
}

std::string HeaderPacket(std::string_view name, std::string_view value) {
  return Packet(kCmdHeader, Strings({name, value}));
}

std::string MessagePackets(const TestMessage& message) {
  std::string out;
  std::vector<std::pair<std::string, std::string>> macros;
  if (!message.queue_id.empty()) macros.emplace_back("i", message.queue_id);
  if (!message.user.empty()) macros.emplace_back("{auth_authen}", message.user);
  if (!macros.empty()) out += MacroPacket(kCmdMail, macros);
  out += MailPacket(message.sender);
  for (const std::string& recipient : message.recipients) out += RcptPacket(recipient);
  for (const auto& [name, value] : message.headers) out += HeaderPacket(name, value);
  out += Packet(kCmdEndOfHeaders, "");
  for (std::size_t at = 0; at < message.body.size(); at += 65535) {
    out += Packet(kCmdBody, std::string_view(message.body).substr(at, 65535));
  }
  out += Packet(kCmdEndOfBody, "");
  return out;
}

std::expected<MtaClient, std::string> MtaClient::Connect(const MilterAddress& address) {
  int fd = -1;
  int result = -1;
  if (address.kind == MilterAddress::Kind::kUnix) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    std::strncpy(sun.sun_path, address.path.c_str(), sizeof sun.sun_path - 1);
    if (fd >= 0) result = ::connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun);
  } else if (address.host.find(':') != std::string::npos) {
    fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(address.port);
    ::inet_pton(AF_INET6, address.host.c_str(), &sin6.sin6_addr);
    if (fd >= 0) result = ::connect(fd, reinterpret_cast<sockaddr*>(&sin6), sizeof sin6);
  } else {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(address.port);
    ::inet_pton(AF_INET, address.host.c_str(), &sin.sin_addr);
    if (fd >= 0) result = ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  }
  if (fd < 0 || result != 0) {
    std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return std::unexpected("connect to " + FormatMilterAddress(address) + ": " + reason);
  }
  return MtaClient(fd);
}

MtaClient::MtaClient(MtaClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

MtaClient& MtaClient::operator=(MtaClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

MtaClient::~MtaClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool MtaClient::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

std::expected<ReceivedReply, std::string> MtaClient::Read(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (buffer_.size() >= 5) {
      const auto* b = reinterpret_cast<const unsigned char*>(buffer_.data());
      const std::uint32_t length = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) |
                                   (std::uint32_t{b[2]} << 8) | std::uint32_t{b[3]};
      if (length == 0 || length > (1u << 20)) {
        return std::unexpected("reply of length " + std::to_string(length));
      }
      if (buffer_.size() >= 4 + std::size_t{length}) {
        ReceivedReply reply{buffer_[4], buffer_.substr(5, length - 1)};
        buffer_.erase(0, 4 + std::size_t{length});
        return reply;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::unexpected("timeout");
    pollfd poll_fd{fd_, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::unexpected("timeout");
    char chunk[65536];
    const ssize_t got = ::recv(fd_, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return std::unexpected("closed");
    buffer_.append(chunk, static_cast<std::size_t>(got));
  }
}

void MtaClient::CloseWrite() { ::shutdown(fd_, SHUT_WR); }

bool MtaClient::WaitClosed(std::chrono::milliseconds timeout) {
  while (true) {
    auto reply = Read(timeout);
    if (!reply) return reply.error() == "closed";
  }
}

std::expected<ReceivedReply, std::string> MtaClient::Negotiate() {
  if (!Send(OptionNegotiationPacket())) return std::unexpected("closed");
  return Read();
}

std::expected<std::vector<ReceivedReply>, std::string> MtaClient::SendMessage(
    const TestMessage& message) {
  if (!Send(MessagePackets(message))) return std::unexpected("closed");
  std::vector<ReceivedReply> replies;
  while (true) {
    auto reply = Read();
    if (!reply) return std::unexpected(reply.error());
    replies.push_back(*reply);
    switch (reply->code) {
      case kReplyContinue:
      case kReplyAccept:
      case kReplyReject:
      case kReplyTempfail:
      case kReplyReplyCode:
        return replies;
      default:
        break;
    }
  }
}

}  // namespace nbspamd::milter::testing
