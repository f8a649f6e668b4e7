// ConversationOptions and ConnectionOptions: what the milter does with each message, and the limits
// of each MTA connection. The daemon's settings (milter_* keys) fill these in; docs/MILTER.md
// describes them.
//
//   ConversationOptions options;
//   options.reject_score = 3.0;  // reject spam scoring 3 or more with "550 5.7.1 <reject_text>"
//   if (auto valid = ValidateConversationOptions(options); !valid) return valid.error();
#ifndef NBSPAMD_MILTER_OPTIONS_H_
#define NBSPAMD_MILTER_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::milter {

// What to tell the MTA when the backend cannot answer (nothing learned yet, store degraded).
enum class FailMode {
  kAccept,    // Let the message through unchecked (SMFIR_CONTINUE).
  kTempfail,  // Ask the client to retry later (SMFIR_TEMPFAIL: 451 4.7.1 from Postfix).
};

struct ConversationOptions {
  // A message larger than this (its header fields as rebuilt, and its body: what HTTP's
  // max_body_bytes bounds for POST /classify) is accepted unchecked and counted.
  std::size_t max_body_bytes = std::size_t{10} << 20;
  // Added to spam only: "<flag_header>: YES".
  std::string flag_header = "X-Spam-Flag";
  // Added to every classified message: "<status_header>: <verdict> <confidence|-> score=<s|->".
  std::string status_header = "X-Nbspamd";
  // Delete copies of the two headers above that arrive with the message, and of every other
  // header of nbspamd's own names (any X-Nbspamd*, spamd's X-Spam-Scan-Id), so that a sender
  // cannot forge them (needs the MTA to allow SMFIF_CHGHDRS, which Postfix and Sendmail do).
  bool remove_incoming_headers = true;
  // Spam (the backend's verdict) whose score is at least this is rejected at SMTP time:
  // "550 5.7.1 <reject_text>". nullopt (the default): never. Ham and unsure are never rejected,
  // whatever their score.
  std::optional<double> reject_score;
  std::string reject_text = "Message rejected as spam";
  // Spam whose score is at least this (and that is not rejected) goes to the MTA's quarantine
  // (Postfix: the hold queue), with its headers added. nullopt (the default): never.
  std::optional<double> quarantine_score;
  std::string quarantine_reason = "nbspamd: spam";
  FailMode fail_mode = FailMode::kAccept;
};

// The limits of one MTA connection.
struct ConnectionOptions {
  // A packet longer than this (command byte and data) is a protocol error: the connection closes.
  // Postfix sends body chunks of at most 64 KiB and one packet per header field (header_size_limit,
  // 100 KiB by default).
  std::size_t max_packet_bytes = std::size_t{1} << 20;
  // How long the MTA may keep the connection silent (between messages too; Postfix keeps it for
  // the whole SMTP session, up to its smtpd_timeout per command), or leave our replies unread,
  // before it is closed.
  std::chrono::milliseconds read_timeout = std::chrono::minutes(10);
  // How long a message may wait for its verdict (a worker busy or stuck): then the fail mode
  // answers it (fail_mode: accept unchecked or tempfail), and a verdict that comes later is
  // dropped. Counted in MilterCounters::verdict_timeouts.
  std::chrono::milliseconds verdict_timeout = std::chrono::seconds(60);
};

// Errors (kInvalidArgument, naming the option): max_body_bytes of 0; a header name that is
// empty, longer than 64 or not printable ASCII without ':' and space; a reject text or quarantine
// reason that is empty, longer than 400 or not printable ASCII; a threshold that is not finite.
[[nodiscard]] std::expected<void, Error> ValidateConversationOptions(
    const ConversationOptions& options);
// Errors (kInvalidArgument): max_packet_bytes below 64 KiB (Postfix's body chunks would not fit);
// a read_timeout or verdict_timeout that is not positive.
[[nodiscard]] std::expected<void, Error> ValidateConnectionOptions(
    const ConnectionOptions& options);

// "accept" or "tempfail". Errors: kInvalidArgument otherwise.
[[nodiscard]] std::expected<FailMode, Error> ParseFailMode(std::string_view name);
[[nodiscard]] std::string_view FailModeName(FailMode mode);

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_OPTIONS_H_
