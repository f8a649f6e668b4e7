// SpamdOptions: what a spamd listener allows and what one connection may cost, and the TELL
// policy: who may train nbspamd through the spamd protocol, under which source name.
//
// TELL is off by default, as in spamd (whose --allow-tell turns it on). It is on when the policy
// has grants, each like an HTTP bearer token: a source name, which the ledger records for what is
// trained through it (so it can be listed and rolled back apart), and who may use it. A TELL is
// served under the first grant whose address list holds the client's address (or is empty) and
// whose user list holds the request's User header (or is empty). Any client may send a User
// header it likes (spamc -u), so the address list is the one that keeps strangers out; the user
// list narrows it further, e.g. to the account the mail server's learning job runs as. A refused
// TELL is answered EX_NOPERM before its message is read.
//
//   SpamdTellPolicy policy;
//   policy.grants.push_back(MakeTellGrant("mx1-learning",
//                                         {boost::asio::ip::make_address("192.0.2.25")},
//                                         {"sa-learn"}));
#ifndef NBSPAMD_SPAMD_OPTIONS_H_
#define NBSPAMD_SPAMD_OPTIONS_H_

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/incident.h"
#include "spamd/request.h"
#include "spamd/status.h"

namespace nbspamd::spamd {

// Who may TELL, and the source their training is recorded under.
struct SpamdTellGrant {
  // As an HTTP token's name: 1–64 characters of A-Z a-z 0-9 _ . - (ValidateTellPolicy).
  std::string source;
  // Exact client addresses (an IPv4 client reaching an IPv6 socket as ::ffff:a.b.c.d matches
  // its IPv4 form). Empty: any client that can reach the listener.
  std::vector<boost::asio::ip::address> addresses;
  // Exact User header values. Empty: any user, and requests without a User header.
  std::vector<std::string> users;
};

// A grant for `source`, from `addresses` (empty: any), for `users` (empty: any).
[[nodiscard]] SpamdTellGrant MakeTellGrant(std::string source,
                                           std::vector<boost::asio::ip::address> addresses = {},
                                           std::vector<std::string> users = {});

struct SpamdTellPolicy {
  // Tried in order. Empty: TELL is off.
  std::vector<SpamdTellGrant> grants;
};

struct SpamdOptions {
  SpamdLimits limits;
  // How long a client may take to send its whole request; then it gets EX_TIMEOUT and the
  // connection closes.
  std::chrono::milliseconds read_timeout{30000};
  // How long the backend may take to answer a request; then the client gets EX_TEMPFAIL and the
  // backend's late answer is dropped.
  std::chrono::milliseconds verdict_timeout{60000};
  // How long writing the response may take before the connection is dropped.
  std::chrono::milliseconds write_timeout{30000};
  SpamdTellPolicy tell;
  // Backend errors and failed accepts, for the daemon's log (common/incident.h); exceptions are
  // noted by NoteHandlerException. Unset: they are only counted.
  IncidentHook on_incident;
};

// Checks the grants' source names (as HTTP token names: 1–64 characters of A-Z a-z 0-9 _ . -,
// not "autolearn") and that no two grants share one. Errors: kInvalidArgument naming the grant.
[[nodiscard]] std::expected<void, Error> ValidateTellPolicy(const SpamdTellPolicy& policy);

// Parses the policy as the `spamd_tell` setting writes it: grants separated by ';', each its
// source name, then optionally `from` and a comma-separated list of numeric addresses, and
// `users` and a comma-separated list of User header values, separated by spaces:
//
//   "mx-learning from 192.0.2.25,2001:db8::25 users sa-learn; local from 127.0.0.1"
//
// "" (or only spaces) is the empty policy: TELL off. The result passes ValidateTellPolicy.
// Errors: kInvalidArgument naming the grant and what is wrong with it.
[[nodiscard]] std::expected<SpamdTellPolicy, Error> ParseTellPolicy(std::string_view text);

// The source of the first grant of `policy` that lets a client at `address` (nullopt when
// unknown) sending User `user` ("" for none) train; else the EX_NOPERM failure to answer.
[[nodiscard]] std::expected<std::string, SpamdFailure> CheckTell(
    const SpamdTellPolicy& policy, const std::optional<boost::asio::ip::address>& address,
    std::string_view user);

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_OPTIONS_H_
