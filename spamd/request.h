// SpamdRequestParser: turns the bytes a SPAMC client sends into a SpamdRequest, incrementally,
// with limits. Pure: no sockets, so every malformed input can be tested in a table.
//
// A request (spamd/PROTOCOL of SpamAssassin; spamc 4.0 speaks SPAMC/1.5):
//
//   CHECK SPAMC/1.5\r\n               a command and the protocol version
//   User: alice\r\n                   headers, "Name: value"
//   Content-length: 1234\r\n
//   \r\n                              a blank line
//   <1234 bytes of message>
//
//   SpamdRequestParser parser(limits);
//   auto status = parser.Feed(bytes);          // as they arrive
//   if (status == ParseStatus::kNeedMore && client_closed) status = parser.Finish();
//   if (status == ParseStatus::kComplete) Serve(parser.request());
//   if (status == ParseStatus::kFailed) Answer(parser.failure());
//
// Lines end in CRLF or a bare LF. Header names are matched without regard to case; unknown
// headers are ignored, as spamd does. Content-length is optional (the body then runs to the end
// of the client's input); SPAMC/1.0 has no headers at all. PING and SKIP take no body, and in
// protocol versions before 1.5 no headers either. Bytes after the body are ignored: one request
// per connection.
//
// Failures (all with EX_PROTOCOL unless named):
// - a request line that is not "COMMAND SPAMC/1.<digit>", an unknown command;
// - request line and headers over max_header_bytes, or more than kMaxHeaderLines headers;
// - a header line without a colon; a Content-length that is not digits, or two that differ;
// - a User with control characters or over kMaxUserBytes; a Message-class not spam or ham;
// - Compress other than zlib, or zlib without Content-length; zlib data that does not inflate
//   (EX_DATAERR);
// - a declared or received body (inflated, for zlib) over max_body_bytes (EX_DATAERR);
// - the input ending before the headers did, or before Content-length bytes of body;
// - TELL with both Set: local and Remove: local, or Set: local without Message-class.
//
// Thread safety: none; one parser per connection.
#ifndef NBSPAMD_SPAMD_REQUEST_H_
#define NBSPAMD_SPAMD_REQUEST_H_

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "spamd/backend.h"
#include "spamd/status.h"

namespace nbspamd::spamd {

enum class SpamdCommand {
  kCheck,         // The verdict only: "Spam: True ; S / T".
  kSymbols,       // The verdict and the names of the rules hit.
  kReport,        // The verdict and a report for people.
  kReportIfSpam,  // The same, with an empty report for non-spam.
  kProcess,       // The verdict and the message with X-Spam-* headers.
  kHeaders,       // As kProcess, up to the blank line that ends the message's headers.
  kTell,          // Learn or forget the message.
  kPing,          // "SPAMD/1.5 0 PONG".
  kSkip,          // Nothing: the client changed its mind.
};

// The command's name on the wire ("REPORT_IFSPAM").
[[nodiscard]] std::string_view SpamdCommandName(SpamdCommand command);

inline constexpr std::size_t kMaxHeaderLines = 256;  // As spamd: a bound against header floods.
inline constexpr std::size_t kMaxUserBytes = 256;

struct SpamdLimits {
  std::size_t max_header_bytes = 16 << 10;  // The request line and headers.
  std::size_t max_body_bytes = 10 << 20;    // The message (after inflating, for zlib).
};

struct SpamdRequest {
  SpamdCommand command = SpamdCommand::kPing;
  int version_minor = 5;  // SPAMC/1.<version_minor>: the response's layout depends on it.
  std::optional<std::size_t> content_length;
  std::string user;  // "" without a User header.
  bool compressed = false;
  std::optional<SpamdLabel> message_class;
  bool set_local = false;
  bool set_remote = false;
  bool remove_local = false;
  bool remove_remote = false;
  std::string body;  // The message, inflated.
};

enum class ParseStatus { kNeedMore, kComplete, kFailed };

class SpamdRequestParser {
 public:
  explicit SpamdRequestParser(SpamdLimits limits) : limits_(limits) {}

  // Takes the next bytes of the connection. Once the status is kComplete or kFailed, further
  // bytes are ignored and the status stays.
  ParseStatus Feed(std::string_view bytes);
  // The client has closed its sending side: completes a body that runs to the end of input, and
  // fails anything else unfinished.
  ParseStatus Finish();

  [[nodiscard]] ParseStatus status() const { return status_; }
  // Whether the request line and headers have been read: request() then holds all but the body.
  [[nodiscard]] bool headers_done() const {
    return phase_ == Phase::kBody || phase_ == Phase::kDone;
  }
  [[nodiscard]] const SpamdRequest& request() const { return request_; }
  [[nodiscard]] SpamdRequest& request() { return request_; }
  // REQUIRES: status() == kFailed.
  [[nodiscard]] const SpamdFailure& failure() const { return failure_; }

 private:
  enum class Phase { kRequestLine, kHeaders, kBody, kDone };

  ParseStatus Fail(SpamdStatus status, std::string message);
  ParseStatus Complete();
  // Consumes complete lines from pending_; returns false when a line is still partial.
  bool ParseLines();
  void ParseRequestLine(std::string_view line);
  void ParseHeader(std::string_view line);
  // Called once the blank line after the headers has been read.
  void EndHeaders();
  void TakeBody();
  bool BodyRunsToEof() const { return !request_.content_length.has_value(); }

  SpamdLimits limits_;
  Phase phase_ = Phase::kRequestLine;
  ParseStatus status_ = ParseStatus::kNeedMore;
  std::string pending_;  // Header bytes not yet parsed into lines.
  std::size_t header_bytes_ = 0;
  std::size_t header_lines_ = 0;
  SpamdRequest request_;
  SpamdFailure failure_;
};

// Inflates zlib data (RFC 1950, as spamc -z sends) into at most `max_bytes`. Errors: a
// SpamdFailure with EX_DATAERR when the data is corrupt, truncated, or inflates past the limit.
[[nodiscard]] std::expected<std::string, SpamdFailure> InflateZlib(std::string_view data,
                                                                   std::size_t max_bytes);

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_REQUEST_H_
