// SessionOptions: what the milter does with each message, and how it checks them. The daemon's
// settings (milter_* keys) fill these in; docs/MILTER.md describes them.
//
//   SessionOptions options;
//   options.reject_above = 3.0;  // reject spam scoring above 3 with "550 5.7.1 <reject_text>"
//   if (auto valid = ValidateSessionOptions(options); !valid) return valid.error();
#ifndef NBSPAMD_MILTER_OPTIONS_H_
#define NBSPAMD_MILTER_OPTIONS_H_

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

struct SessionOptions {
  // A message (headers and body) larger than this is accepted unchecked and counted.
  std::size_t max_message_bytes = std::size_t{10} << 20;
  // Added to spam only: "<flag_header>: YES".
  std::string flag_header = "X-Spam-Flag";
  // Added to every classified message: "<status_header>: <verdict> <confidence|-> score=<s|->".
  std::string status_header = "X-Nbspamd";
  // Delete copies of the two headers above that arrive with the message, so that a sender cannot
  // forge them (needs the MTA to allow SMFIF_CHGHDRS, which Postfix and Sendmail do).
  bool remove_incoming_headers = true;
  // Spam whose score is above this is rejected: "550 5.7.1 <reject_text>". nullopt: never.
  std::optional<double> reject_above;
  std::string reject_text = "Message rejected as spam";
  // Spam whose score is above this (and not rejected) goes to the MTA's quarantine (Postfix: the
  // hold queue). nullopt: never.
  std::optional<double> quarantine_above;
  std::string quarantine_reason = "nbspamd: spam";
  FailMode fail_mode = FailMode::kAccept;
};

// Errors (kInvalidArgument, naming the option): max_message_bytes of 0; a header name that is
// empty, longer than 64 or not printable ASCII without ':' and space; a reject text or quarantine
// reason that is empty, longer than 400 or not printable ASCII; a threshold that is not finite.
[[nodiscard]] std::expected<void, Error> ValidateSessionOptions(const SessionOptions& options);

// "accept" or "tempfail". Errors: kInvalidArgument otherwise.
[[nodiscard]] std::expected<FailMode, Error> ParseFailMode(std::string_view name);
[[nodiscard]] std::string_view FailModeName(FailMode mode);

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_OPTIONS_H_
