#include "milter/address.h"

#include <sys/un.h>

#include <boost/asio/ip/address.hpp>
#include <charconv>

namespace nbspamd::milter {

namespace {

std::unexpected<Error> Invalid(std::string_view text, std::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "milter address '" + std::string(text) + "': " + std::string(why));
}

}  // namespace

std::expected<MilterAddress, Error> ParseMilterAddress(std::string_view text) {
  MilterAddress address;
  std::string_view rest = text;
  if (rest.starts_with("unix:") || rest.starts_with("local:")) {
    rest.remove_prefix(rest.find(':') + 1);
    if (!rest.starts_with('/')) return Invalid(text, "the socket path must be absolute");
    if (rest.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return Invalid(text, "the socket path is longer than a Unix socket address holds");
    }
    address.kind = MilterAddress::Kind::kUnix;
    address.path = std::string(rest);
    return address;
  }
  if (rest.starts_with("inet:")) {
    rest.remove_prefix(5);
  } else if (rest.starts_with("inet6:")) {
    rest.remove_prefix(6);
  }
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return Invalid(text, "no port (inet:HOST:PORT)");
  std::string_view host = rest.substr(0, colon);
  const std::string_view port = rest.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return Invalid(text, "the port must be a number from 0 to 65535");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code bad;
  boost::asio::ip::make_address(std::string(host), bad);
  if (bad) return Invalid(text, "the host must be a numeric IPv4 or IPv6 address");
  address.host = std::string(host);
  address.port = static_cast<std::uint16_t>(value);
  return address;
}

std::string FormatMilterAddress(const MilterAddress& address) {
  if (address.kind == MilterAddress::Kind::kUnix) return "unix:" + address.path;
  const bool v6 = address.host.find(':') != std::string::npos;
  return "inet:" + (v6 ? "[" + address.host + "]" : address.host) + ":" +
         std::to_string(address.port);
}

}  // namespace nbspamd::milter
