// SpamdOptions: what a spamd listener allows and what one connection may cost, and the TELL
// policy: who may train nbspamd through the spamd protocol.
//
// TELL is off by default, as in spamd (whose --allow-tell turns it on). When on, a TELL request
// is served only when its client address is one of tell.allowed_addresses (if that list is not
// empty) and its User header is one of tell.allowed_users (if that list is not empty). Any
// client may send a User header it likes (spamc -u), so the address list is the one that keeps
// strangers out; the user list narrows it further, e.g. to the account the MTA's learning job
// runs as. A refused TELL is answered EX_NOPERM before its message is read.
#ifndef NBSPAMD_SPAMD_SPAMD_OPTIONS_H_
#define NBSPAMD_SPAMD_SPAMD_OPTIONS_H_

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spamd/spamd_request.h"
#include "spamd/spamd_status.h"

namespace nbspamd::spamd {

struct SpamdTellPolicy {
  bool enabled = false;
  // Exact client addresses (an IPv4 client reaching an IPv6 socket as ::ffff:a.b.c.d matches
  // its IPv4 form). Empty: any client that can reach the listener.
  std::vector<boost::asio::ip::address> allowed_addresses;
  // Exact User header values. Empty: any user, and requests without a User header.
  std::vector<std::string> allowed_users;
};

struct SpamdOptions {
  SpamdLimits limits;
  // How long a client may take to send its whole request; then it gets EX_TIMEOUT and the
  // connection closes.
  std::chrono::milliseconds read_timeout{30000};
  // How long writing the response may take before the connection is dropped.
  std::chrono::milliseconds write_timeout{30000};
  SpamdTellPolicy tell;
  // The source name TELL requests train under (RequestContext::source).
  std::string tell_source = "spamd";
};

// Whether `policy` lets a client at `address` (nullopt when unknown) sending User `user` ("" for
// none) train. nullopt when allowed, else the EX_NOPERM failure to answer.
[[nodiscard]] std::optional<SpamdFailure> CheckTell(
    const SpamdTellPolicy& policy, const std::optional<boost::asio::ip::address>& address,
    std::string_view user);

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_SPAMD_OPTIONS_H_
