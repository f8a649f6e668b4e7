#include "spamd/response.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace nbspamd::spamd {

namespace {

// S beyond this is shown as this: enough for any ranking, short enough for any client's buffer.
constexpr double kScoreBound = 999.9;

std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  if (value == 0) value = 0;  // Turns -0.0 into 0.0.
  char text[64];
  const auto result =
      std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals);
  return std::string(text, result.ptr);
}

std::string SpamHeader(const SpamdScore& score) {
  return std::string("Spam: ") + (score.spam ? "True" : "False") + " ; " +
         FormatScore(score.score) + " / " + FormatScore(score.threshold);
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    char p = prefix[i];
    if (p >= 'A' && p <= 'Z') p = static_cast<char>(p - 'A' + 'a');
    if (c != p) return false;
  }
  return true;
}

// The X-Spam-* lines nbspamd adds, each ended by `eol`.
std::string SpamHeaders(const SpamdVerdict& verdict, const SpamdScore& score,
                        std::string_view eol) {
  std::string out;
  out.append("X-Spam-Checker-Version: nbspamd").append(eol);
  if (score.spam) out.append("X-Spam-Flag: YES").append(eol);
  const int stars = score.score >= 1 ? static_cast<int>(std::min(score.score, 50.0)) : 0;
  out.append("X-Spam-Level: ").append(static_cast<std::size_t>(stars), '*').append(eol);
  out.append("X-Spam-Status: ")
      .append(score.spam ? "Yes" : "No")
      .append(", score=")
      .append(FormatScore(score.score))
      .append(" required=")
      .append(FormatScore(score.threshold))
      .append(" tests=")
      .append(SymbolOf(verdict.verdict))
      .append(" verdict=")
      .append(FrontEndVerdictName(verdict.verdict))
      .append(" nbspamd_score=")
      .append(verdict.score && std::isfinite(*verdict.score) ? Fixed(*verdict.score, 3) : "none")
      .append(" nbspamd_threshold=")
      .append(Fixed(verdict.spam_threshold, 3));
  if (verdict.spam_confidence)
    out.append(" confidence=").append(Fixed(*verdict.spam_confidence, 3));
  out.append(eol);
  if (!verdict.scan_id.empty()) {
    out.append("X-Spam-Scan-Id: ").append(verdict.scan_id);
    if (!verdict.scan_signature.empty()) out.append("; sig=").append(verdict.scan_signature);
    out.append(eol);
  }
  return out;
}

struct Marked {
  std::string text;
  std::size_t header_end = 0;  // Just past the blank line ending the header section.
};

Marked Mark(std::string_view message, const SpamdVerdict& verdict) {
  const SpamdScore score = MapScore(verdict);
  const auto first_newline = message.find('\n');
  const std::string_view eol = (first_newline != std::string_view::npos && first_newline > 0 &&
                                message[first_newline - 1] == '\r')
                                   ? "\r\n"
                                   : "\n";
  Marked marked;
  marked.text.reserve(message.size() + 512);
  // Within an X-Spam-* or X-Nbspamd* header (its continuation lines go with it).
  bool dropping = false;
  std::size_t position = 0;
  while (position < message.size()) {
    const auto newline = message.find('\n', position);
    const std::size_t end = newline == std::string_view::npos ? message.size() : newline + 1;
    std::string_view line = message.substr(position, end - position);
    std::string_view content = line;
    if (content.ends_with('\n')) content.remove_suffix(1);
    if (content.ends_with('\r')) content.remove_suffix(1);
    if (content.empty()) break;  // The blank line: the body follows.
    position = end;
    const bool continuation = content.front() == ' ' || content.front() == '\t';
    if (!continuation) {
      // A sender's copies of nbspamd's headers (spamd's X-Spam-*, the milter's X-Nbspamd*).
      dropping = StartsWithNoCase(content, "X-Spam-") || StartsWithNoCase(content, "X-Nbspamd");
    }
    if (dropping) continue;
    marked.text.append(line);
    if (!line.ends_with('\n')) marked.text.append(eol);  // A last header line with no newline.
  }
  marked.text.append(SpamHeaders(verdict, score, eol));
  if (position < message.size()) {
    // The blank line and the body, as they were.
    const auto newline = message.find('\n', position);
    const std::size_t blank_end = newline == std::string_view::npos ? message.size() : newline + 1;
    marked.text.append(message.substr(position, blank_end - position));
    marked.header_end = marked.text.size();
    marked.text.append(message.substr(blank_end));
  } else {
    marked.text.append(eol);  // No body: end the header section all the same.
    marked.header_end = marked.text.size();
  }
  return marked;
}

}  // namespace

SpamdScore MapScore(const SpamdVerdict& verdict) {
  SpamdScore result;
  result.spam = verdict.verdict == SpamdVerdictKind::kSpam;
  double s = 0;
  if (verdict.score && std::isfinite(*verdict.score) && std::isfinite(verdict.spam_threshold)) {
    s = kSpamdThreshold + 5 * (*verdict.score - verdict.spam_threshold);
    s = std::clamp(s, -kScoreBound, kScoreBound);
    s = std::round(s * 10) / 10;
  }
  // S agrees with the verdict: S ≥ T for spam only.
  constexpr double kBelowThreshold = kSpamdThreshold - 0.1;
  s = result.spam ? std::max(s, kSpamdThreshold) : std::min(s, kBelowThreshold);
  result.score = s == 0 ? 0.0 : s;
  return result;
}

std::string FormatScore(double value) { return Fixed(value, 1); }

std::string_view SymbolOf(SpamdVerdictKind verdict) {
  switch (verdict) {
    case SpamdVerdictKind::kSpam:
      return "NBSPAMD_SPAM";
    case SpamdVerdictKind::kHam:
      return "NBSPAMD_HAM";
    case SpamdVerdictKind::kUnsure:
      return "NBSPAMD_UNSURE";
  }
  return "NBSPAMD_UNSURE";
}

std::string ErrorResponse(const SpamdFailure& failure) {
  return "SPAMD/1.0 " + std::to_string(static_cast<int>(failure.status)) + " " +
         (failure.message.empty() ? std::string(SpamdStatusName(failure.status))
                                  : failure.message) +
         "\r\n";
}

std::string PongResponse() { return "SPAMD/1.5 0 PONG\r\n"; }

std::string TellResponse(bool did_set_local, bool did_remove_local) {
  std::string out = "SPAMD/1.1 0 EX_OK\r\n";
  if (did_set_local) out += "DidSet: local\r\n";
  if (did_remove_local) out += "DidRemove: local\r\n";
  out += "\r\n";
  return out;
}

std::string VerdictResponse(const SpamdRequest& request, const SpamdVerdict& verdict) {
  const SpamdScore score = MapScore(verdict);
  const std::string status = "SPAMD/1.1 0 EX_OK\r\n";
  const std::string spam = SpamHeader(score) + "\r\n";
  const int minor = request.version_minor;
  std::string body;
  switch (request.command) {
    case SpamdCommand::kCheck:
      return status + spam + "\r\n";
    case SpamdCommand::kSymbols:
      body = std::string(SymbolOf(verdict.verdict));
      if (minor < 3) body += "\r\n";  // As spamd: before 1.3 the list ends in CRLF.
      break;
    case SpamdCommand::kReport:
      body = ReportText(verdict);
      break;
    case SpamdCommand::kReportIfSpam:
      if (score.spam) body = ReportText(verdict);
      break;
    case SpamdCommand::kProcess:
    case SpamdCommand::kHeaders: {
      body = request.command == SpamdCommand::kProcess ? MarkMessage(request.body, verdict)
                                                       : MarkHeaders(request.body, verdict);
      const std::string length = "Content-length: " + std::to_string(body.size()) + "\r\n";
      if (minor >= 3) return status + length + spam + "\r\n" + body;
      if (minor == 2) return status + length + "\r\n" + body;
      return "SPAMD/1.0 0 EX_OK\r\n" + body;  // Before 1.2: no headers, the message follows.
    }
    case SpamdCommand::kTell:
    case SpamdCommand::kPing:
    case SpamdCommand::kSkip:
      return status + spam + "\r\n";  // Not reached: these are answered elsewhere.
  }
  if (minor >= 3) {
    return status + "Content-length: " + std::to_string(body.size()) + "\r\n" + spam + "\r\n" +
           body;
  }
  return status + spam + "\r\n" + body;
}

std::string MarkMessage(std::string_view message, const SpamdVerdict& verdict) {
  return Mark(message, verdict).text;
}

std::string MarkHeaders(std::string_view message, const SpamdVerdict& verdict) {
  Marked marked = Mark(message, verdict);
  marked.text.resize(marked.header_end);
  return marked.text;
}

std::string ReportText(const SpamdVerdict& verdict) {
  const SpamdScore score = MapScore(verdict);
  std::string out;
  switch (verdict.verdict) {
    case SpamdVerdictKind::kSpam:
      out = "nbspamd, a naive Bayes filter, has identified this message as spam.\n";
      break;
    case SpamdVerdictKind::kHam:
      out = "nbspamd, a naive Bayes filter, has identified this message as ham (not spam).\n";
      break;
    case SpamdVerdictKind::kUnsure:
      out = "nbspamd, a naive Bayes filter, is unsure about this message (not marked as spam).\n";
      break;
  }
  out += "\nContent analysis details:   (" + FormatScore(score.score) + " points, " +
         FormatScore(score.threshold) + " required)\n\n";
  out += " pts rule name              description\n";
  out += "---- ---------------------- --------------------------------------------------\n";
  std::string points = FormatScore(score.score);
  if (points.size() < 4) points.insert(0, 4 - points.size(), ' ');
  std::string rule(SymbolOf(verdict.verdict));
  rule.resize(std::max<std::size_t>(rule.size(), 22), ' ');
  std::string description;
  if (verdict.score && std::isfinite(*verdict.score)) {
    description = "score " + Fixed(*verdict.score, 3) + ", spam threshold " +
                  Fixed(verdict.spam_threshold, 3);
  } else {
    description = "no score: the model lacks spam or ham examples";
  }
  if (verdict.spam_confidence) description += ", P(spam) " + Fixed(*verdict.spam_confidence, 2);
  out += points + " " + rule + " " + description + "\n";
  return out;
}

}  // namespace nbspamd::spamd
