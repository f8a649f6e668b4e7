// MilterAddress: where a milter listens, written as Postfix writes it in smtpd_milters.
//
//   auto address = ParseMilterAddress("inet:127.0.0.1:8891");  // or "unix:/run/nbspamd/milter"
//   if (!address) return std::unexpected(address.error());
//   FormatMilterAddress(*address);  // "inet:127.0.0.1:8891"
#ifndef NBSPAMD_MILTER_ADDRESS_H_
#define NBSPAMD_MILTER_ADDRESS_H_

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::milter {

struct MilterAddress {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  // kTcp: a numeric IPv4 or IPv6 address ("localhost" is read as 127.0.0.1).
  std::uint16_t port = 0;  // kTcp: 0 asks for an ephemeral port.
  std::string path;        // kUnix: the socket's absolute path.
};

// Accepts "inet:HOST:PORT" (IPv6 as "inet:[::1]:PORT" or "inet6:::1:PORT"), "HOST:PORT", and
// "unix:/PATH" or "local:/PATH". Errors: kInvalidArgument saying what is wrong (no port, a port
// above 65535, a host that is not a numeric address, a relative or empty path, a path longer than
// a Unix socket address holds).
[[nodiscard]] std::expected<MilterAddress, Error> ParseMilterAddress(std::string_view text);

// "inet:127.0.0.1:8891", "inet:[::1]:8891" or "unix:/path": what Postfix's smtpd_milters takes.
[[nodiscard]] std::string FormatMilterAddress(const MilterAddress& address);

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_ADDRESS_H_
