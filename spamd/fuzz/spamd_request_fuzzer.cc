// Fuzz target: the input is what a SPAMC client sends on one connection, after one selector byte.
// SpamdRequestParser reads it twice, whole and cut into reads at places the selector picks (as
// SpamdConnection feeds it, read by read), the client then closing its side when the selector says
// so; and for each complete request, the responses are built against fixed verdicts. What must
// hold (docs/FUZZING.md):
//   - the parser never crashes, and once complete or failed it stays so;
//   - how the bytes are cut into reads changes nothing: status, request or failure;
//   - a failure is an error status spamd uses, and its text is one printable ASCII line, never
//     the request's bytes; the error response is that one status line;
//   - a complete request respects the limits: body within max_body_bytes, User printable and
//     within kMaxUserBytes, PING and SKIP without body;
//   - every response starts "SPAMD/1.", its Content-length (when it has one) is its body's
//     length, and its "Spam:" line says True exactly when S >= T, exactly for a spam verdict;
//   - PROCESS keeps no X-Spam-* header of the client's: the only ones are nbspamd's.
// Built with libFuzzer when NBSPAMD_FUZZ is on; tokenizer/fuzz/replay_main.cc runs saved inputs
// without it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spamd/options.h"
#include "spamd/request.h"
#include "spamd/response.h"

namespace {

using namespace nbspamd::spamd;

[[noreturn]] void Fail(const char* what, std::uint8_t selector) {
  std::fprintf(stderr, "spamd_request_fuzzer: %s (selector 0x%02x)\n", what, selector);
  std::abort();
}

// Small limits (selector bit 0) let the fuzzer reach them; the daemon's defaults otherwise.
SpamdLimits LimitsFor(std::uint8_t selector) {
  SpamdLimits limits;
  if (selector & 1) {
    limits.max_header_bytes = 256;
    limits.max_body_bytes = 512;
  }
  return limits;
}

// Read sizes from 1 to 64 bytes, from a small generator seeded by the selector.
std::vector<std::size_t> Cuts(std::uint8_t selector, std::size_t size) {
  std::vector<std::size_t> cuts;
  std::uint32_t state = 0x9e3779b9u ^ selector;
  for (std::size_t used = 0; used < size;) {
    state = state * 1664525u + 1013904223u;
    const std::size_t piece = std::min<std::size_t>(1 + (state >> 26), size - used);
    cuts.push_back(piece);
    used += piece;
  }
  return cuts;
}

struct Outcome {
  ParseStatus status;
  SpamdRequest request;
  SpamdFailure failure;
};

Outcome Parse(std::string_view input, const std::vector<std::size_t>& cuts, bool eof,
              std::uint8_t selector) {
  SpamdRequestParser parser(LimitsFor(selector));
  std::size_t at = 0;
  ParseStatus status = ParseStatus::kNeedMore;
  for (const std::size_t piece : cuts) {
    const ParseStatus before = status;
    status = parser.Feed(input.substr(at, piece));
    at += piece;
    if (before != ParseStatus::kNeedMore && status != before)
      Fail("a final status changed", selector);
    if (status != parser.status()) Fail("Feed and status() disagree", selector);
  }
  if (eof) {
    const ParseStatus before = status;
    status = parser.Finish();
    if (before != ParseStatus::kNeedMore && status != before)
      Fail("Finish changed a final status", selector);
  }
  Outcome outcome{status, {}, {}};
  if (status == ParseStatus::kComplete) outcome.request = parser.request();
  if (status == ParseStatus::kFailed) outcome.failure = parser.failure();
  return outcome;
}

bool SameRequest(const SpamdRequest& a, const SpamdRequest& b) {
  return a.command == b.command && a.version_minor == b.version_minor &&
         a.content_length == b.content_length && a.user == b.user && a.compressed == b.compressed &&
         a.message_class == b.message_class && a.set_local == b.set_local &&
         a.set_remote == b.set_remote && a.remove_local == b.remove_local &&
         a.remove_remote == b.remove_remote && a.body == b.body;
}

bool PrintableLine(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return false;
  }
  return true;
}

void CheckFailure(const SpamdFailure& failure, std::uint8_t selector) {
  switch (failure.status) {
    case SpamdStatus::kProtocol:
    case SpamdStatus::kDataErr:
    case SpamdStatus::kSoftware:  // zlib could not start: out of memory.
      break;
    default:
      Fail("a parse failure with a status the parser does not use", selector);
  }
  if (failure.message.empty() || failure.message.size() > 200 || !PrintableLine(failure.message)) {
    Fail("a failure text that is not one short printable line", selector);
  }
  const std::string response = ErrorResponse(failure);
  if (!response.starts_with("SPAMD/1.0 ") || response.find("\r\n") != response.size() - 2) {
    Fail("an error response that is not one status line", selector);
  }
}

void CheckRequest(const SpamdRequest& request, const SpamdLimits& limits, std::uint8_t selector) {
  if (request.body.size() > limits.max_body_bytes) Fail("a body over the limit", selector);
  // Bytes 0x80 and over may be in a User (UTF-8 names); control characters may not.
  if (request.user.size() > kMaxUserBytes) Fail("a User over the limit", selector);
  for (const char c : request.user) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) Fail("a User with a control character", selector);
  }
  if ((request.command == SpamdCommand::kPing || request.command == SpamdCommand::kSkip) &&
      !request.body.empty()) {
    Fail("PING or SKIP with a body", selector);
  }
  if (request.version_minor < 0 || request.version_minor > 9)
    Fail("a version out of range", selector);
}

// The responses' framing: status line, optional Content-length matching the body, Spam: line.
void CheckResponse(const SpamdRequest& request, const SpamdVerdict& verdict,
                   const std::string& response, std::uint8_t selector) {
  if (!response.starts_with("SPAMD/1.")) Fail("a response not starting SPAMD/1.", selector);
  const auto header_end = response.find("\r\n\r\n");
  if (request.version_minor < 2 &&
      (request.command == SpamdCommand::kProcess || request.command == SpamdCommand::kHeaders)) {
    return;  // Before 1.2 the marked message follows the status line directly.
  }
  if (header_end == std::string::npos) Fail("a response without a blank line", selector);
  const std::string_view head(response.data(), header_end + 2);
  const std::string_view body = std::string_view(response).substr(header_end + 4);
  const auto length_at = head.find("\r\nContent-length: ");
  if (length_at != std::string_view::npos) {
    const auto value = head.substr(length_at + 18);
    if (std::to_string(body.size()) != value.substr(0, value.find("\r\n"))) {
      Fail("a Content-length that is not the body's length", selector);
    }
  }
  const auto spam_at = head.find("\r\nSpam: ");
  if (spam_at == std::string_view::npos) {
    if (request.version_minor >= 3 ||
        (request.command != SpamdCommand::kProcess && request.command != SpamdCommand::kHeaders)) {
      Fail("a response without its Spam: line", selector);
    }
    return;
  }
  std::string_view line = head.substr(spam_at + 8);
  line = line.substr(0, line.find("\r\n"));
  const bool says_spam = line.starts_with("True ; ");
  if (!says_spam && !line.starts_with("False ; "))
    Fail("a Spam: line neither True nor False", selector);
  if (says_spam != (verdict.verdict == SpamdVerdictKind::kSpam)) {
    Fail("a Spam: line disagreeing with the verdict", selector);
  }
  const auto numbers = line.substr(line.find(';') + 2);
  const double s = std::strtod(std::string(numbers.substr(0, numbers.find(' '))).c_str(), nullptr);
  const double t = std::strtod(std::string(numbers.substr(numbers.find('/') + 2)).c_str(), nullptr);
  if (t != kSpamdThreshold || (s >= t) != says_spam)
    Fail("S and T disagreeing with the verdict", selector);
}

// The X-Spam-* headers of a marked message: exactly nbspamd's own.
void CheckMarked(std::string_view marked, const SpamdVerdict& verdict, std::uint8_t selector) {
  std::size_t spam_headers = 0;
  std::size_t position = 0;
  while (position < marked.size()) {
    const auto newline = marked.find('\n', position);
    const std::size_t end = newline == std::string_view::npos ? marked.size() : newline + 1;
    std::string_view line = marked.substr(position, end - position);
    position = end;
    if (line == "\n" || line == "\r\n") break;
    if (line.size() >= 7 && (line[0] == 'X' || line[0] == 'x') &&
        std::string_view(line.data() + 1, 6) == "-Spam-") {
      ++spam_headers;
    }
    // Any case: a forged "x-spam-flag" must have gone too.
    std::string lower(line.substr(0, 7));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "x-spam-" && !line.starts_with("X-Spam-"))
      Fail("a client's X-Spam-* header kept", selector);
  }
  const std::size_t expected = verdict.verdict == SpamdVerdictKind::kSpam ? 4 : 3;
  if (spam_headers != expected) Fail("not exactly nbspamd's X-Spam-* headers", selector);
}

SpamdVerdict Verdict(std::optional<double> score, SpamdVerdictKind kind, double threshold,
                     std::optional<double> confidence) {
  SpamdVerdict verdict;
  verdict.score = score;
  verdict.verdict = kind;
  verdict.spam_threshold = threshold;
  verdict.spam_confidence = confidence;
  return verdict;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool eof = (selector & 2) != 0;  // The client closes its side after the input.

  const Outcome whole = Parse(input, {input.size()}, eof, selector);
  const Outcome cut = Parse(input, Cuts(selector, input.size()), eof, selector);
  if (whole.status != cut.status) Fail("cutting the input into reads changed the status", selector);
  if (whole.status == ParseStatus::kFailed) {
    if (whole.failure.status != cut.failure.status ||
        whole.failure.message != cut.failure.message) {
      Fail("cutting the input into reads changed the failure", selector);
    }
    CheckFailure(whole.failure, selector);
    return 0;
  }
  if (whole.status != ParseStatus::kComplete) return 0;
  if (!SameRequest(whole.request, cut.request)) {
    Fail("cutting the input into reads changed the request", selector);
  }
  const SpamdRequest& request = whole.request;
  CheckRequest(request, LimitsFor(selector), selector);

  // The TELL policy: the grant for "trainer" allows exactly that user.
  SpamdTellPolicy policy;
  policy.grants.push_back(MakeTellGrant("fuzz", {}, {"trainer"}));
  if (CheckTell(policy, std::nullopt, request.user).has_value() != (request.user == "trainer")) {
    Fail("the TELL policy disagreeing with its grant", selector);
  }

  switch (request.command) {
    case SpamdCommand::kPing:
    case SpamdCommand::kSkip:
    case SpamdCommand::kTell:
      return 0;
    default:
      break;
  }
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const SpamdVerdict verdicts[] = {
      Verdict(2.0, SpamdVerdictKind::kSpam, 1.0, 0.97),
      Verdict(-1.0, SpamdVerdictKind::kHam, 1.0, 0.02),
      Verdict(1.0, SpamdVerdictKind::kUnsure, 1.0, std::nullopt),
      Verdict(std::nullopt, SpamdVerdictKind::kSpam, 0.0, std::nullopt),
      Verdict(kNaN, SpamdVerdictKind::kHam, kInf, kNaN),
      Verdict(1e300, SpamdVerdictKind::kSpam, -1e300, 1.0),
  };
  for (const SpamdVerdict& verdict : verdicts) {
    CheckResponse(request, verdict, VerdictResponse(request, verdict), selector);
    if (request.command == SpamdCommand::kProcess) {
      CheckMarked(MarkMessage(request.body, verdict), verdict, selector);
    }
  }
  return 0;
}
