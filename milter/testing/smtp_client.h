// A minimal SMTP client for tests: one message to one server on this machine, every step under a
// deadline. It speaks just enough ESMTP to hand a message to Postfix (EHLO, MAIL, RCPT, DATA,
// QUIT; no TLS, no AUTH, no pipelining) and reports the reply that decided the message's fate.
//
//   SmtpEnvelope envelope{.sender = "a@example.org", .recipients = {"b@nbspamd.test"}};
//   auto outcome = SendMail(2525, envelope, "Subject: hi\r\n\r\nhello\r\n");
//   if (!outcome) FAIL() << outcome.error().message;  // could not talk to the server at all
//   EXPECT_EQ(outcome->reply.code, 250);              // queued
//   EXPECT_EQ(outcome->stage, "DATA");                // the end-of-data reply, after the milter
#ifndef NBSPAMD_MILTER_TESTING_SMTP_CLIENT_H_
#define NBSPAMD_MILTER_TESTING_SMTP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "common/error.h"

namespace nbspamd::milter::testing {

struct SmtpEnvelope {
  std::string sender;  // Without angle brackets; "" for the null sender.
  std::vector<std::string> recipients;
  std::string helo = "client.nbspamd.test";
};

struct SmtpReply {
  int code = 0;      // 250, 451, 550, ...
  std::string text;  // The lines after the code, joined with '\n' ("5.7.1 Message rejected").
};

// How the transaction ended.
struct SmtpOutcome {
  // The first reply that was not a success (4xx or 5xx), or else the reply to the end of data.
  SmtpReply reply;
  // The step it answered: "CONNECT" (the banner), "EHLO", "MAIL", "RCPT", "DATA" (the DATA
  // command itself: 354 expected) or "END" (the "." that ends the message, when the milter's
  // end-of-body verdict is given).
  std::string stage;
};

// Sends `message` (header fields, a blank line, the body; LF or CRLF line ends, dot-stuffed here)
// to 127.0.0.1:`port`, then QUIT. Thread-safe (no shared state).
// Errors: kUnavailable when the server cannot be reached, closes the connection, sends something
// that is not an SMTP reply, or does not answer a step within `step_timeout`. A 4xx or 5xx answer
// is not an error: it is the outcome.
[[nodiscard]] std::expected<SmtpOutcome, Error> SendMail(
    std::uint16_t port, const SmtpEnvelope& envelope, const std::string& message,
    std::chrono::milliseconds step_timeout = std::chrono::seconds(30));

}  // namespace nbspamd::milter::testing

#endif  // NBSPAMD_MILTER_TESTING_SMTP_CLIENT_H_
