#include "spamd/request.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>

namespace nbspamd::spamd {

namespace {

constexpr std::string_view kSpace = " \t";

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

struct CommandName {
  std::string_view name;
  SpamdCommand command;
};

constexpr std::array<CommandName, 9> kCommands = {{
    {"CHECK", SpamdCommand::kCheck},
    {"SYMBOLS", SpamdCommand::kSymbols},
    {"REPORT", SpamdCommand::kReport},
    {"REPORT_IFSPAM", SpamdCommand::kReportIfSpam},
    {"PROCESS", SpamdCommand::kProcess},
    {"HEADERS", SpamdCommand::kHeaders},
    {"TELL", SpamdCommand::kTell},
    {"PING", SpamdCommand::kPing},
    {"SKIP", SpamdCommand::kSkip},
}};

bool TakesNoBody(SpamdCommand command) {
  return command == SpamdCommand::kPing || command == SpamdCommand::kSkip;
}

// Calls `token` for each comma- or blank-separated word of `value`.
template <class Token>
void ForEachToken(std::string_view value, Token&& token) {
  constexpr std::string_view kSeparators = ", \t";
  while (!value.empty()) {
    const auto start = value.find_first_not_of(kSeparators);
    if (start == std::string_view::npos) return;
    value.remove_prefix(start);
    const auto end = std::min(value.find_first_of(kSeparators), value.size());
    token(value.substr(0, end));
    value.remove_prefix(end);
  }
}

}  // namespace

std::string_view SpamdCommandName(SpamdCommand command) {
  for (const auto& entry : kCommands) {
    if (entry.command == command) return entry.name;
  }
  return "PING";
}

ParseStatus SpamdRequestParser::Fail(SpamdStatus status, std::string message) {
  failure_.status = status;
  failure_.message = std::move(message);
  status_ = ParseStatus::kFailed;
  pending_.clear();
  request_.body.clear();
  return status_;
}

ParseStatus SpamdRequestParser::Complete() {
  if (request_.compressed) {
    auto inflated = InflateZlib(request_.body, limits_.max_body_bytes);
    if (!inflated) return Fail(inflated.error().status, std::move(inflated.error().message));
    request_.body = std::move(*inflated);
  }
  phase_ = Phase::kDone;
  status_ = ParseStatus::kComplete;
  pending_.clear();
  return status_;
}

ParseStatus SpamdRequestParser::Feed(std::string_view bytes) {
  if (status_ != ParseStatus::kNeedMore) return status_;
  if (phase_ == Phase::kRequestLine || phase_ == Phase::kHeaders) {
    pending_.append(bytes);
    if (!ParseLines()) {
      // A partial line: bounded by what is left of the header budget.
      if (status_ == ParseStatus::kNeedMore &&
          header_bytes_ + pending_.size() > limits_.max_header_bytes) {
        return Fail(SpamdStatus::kProtocol, "(request line and headers over " +
                                                std::to_string(limits_.max_header_bytes) +
                                                " bytes)");
      }
      return status_;
    }
    if (status_ != ParseStatus::kNeedMore || phase_ != Phase::kBody) return status_;
    // The blank line ended the headers: what follows it is body.
    TakeBody();
    return status_;
  }
  if (phase_ == Phase::kBody) {
    pending_.assign(bytes);
    TakeBody();
  }
  return status_;
}

void SpamdRequestParser::TakeBody() {
  std::string_view bytes = pending_;
  if (request_.content_length) {
    const std::size_t missing = *request_.content_length - request_.body.size();
    request_.body.append(bytes.substr(0, std::min(missing, bytes.size())));
    pending_.clear();
    if (request_.body.size() == *request_.content_length) Complete();
    return;
  }
  request_.body.append(bytes);
  pending_.clear();
  if (request_.body.size() > limits_.max_body_bytes) {
    Fail(SpamdStatus::kDataErr,
         "message over the limit of " + std::to_string(limits_.max_body_bytes) + " bytes");
  }
}

bool SpamdRequestParser::ParseLines() {
  std::size_t start = 0;
  while (status_ == ParseStatus::kNeedMore &&
         (phase_ == Phase::kRequestLine || phase_ == Phase::kHeaders)) {
    const auto newline = pending_.find('\n', start);
    if (newline == std::string::npos) {
      pending_.erase(0, start);
      return false;
    }
    header_bytes_ += newline + 1 - start;
    if (header_bytes_ > limits_.max_header_bytes) {
      Fail(SpamdStatus::kProtocol, "(request line and headers over " +
                                       std::to_string(limits_.max_header_bytes) + " bytes)");
      return true;
    }
    std::string_view line(pending_.data() + start, newline - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = newline + 1;
    if (phase_ == Phase::kRequestLine) {
      ParseRequestLine(line);
    } else if (line.empty()) {
      EndHeaders();
    } else {
      ParseHeader(line);
    }
  }
  if (status_ == ParseStatus::kNeedMore) {
    pending_.erase(0, start);
  }
  return true;
}

void SpamdRequestParser::ParseRequestLine(std::string_view line) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) {
    Fail(SpamdStatus::kProtocol, "(request line not 'COMMAND SPAMC/1.x')");
    return;
  }
  const std::string_view name = line.substr(0, space);
  const std::string_view version = line.substr(space + 1);
  const auto known = std::ranges::find(kCommands, name, &CommandName::name);
  if (known == kCommands.end()) {
    Fail(SpamdStatus::kProtocol, "(unknown command)");
    return;
  }
  constexpr std::string_view kPrefix = "SPAMC/1.";
  if (version.size() != kPrefix.size() + 1 || !version.starts_with(kPrefix) ||
      version.back() < '0' || version.back() > '9') {
    Fail(SpamdStatus::kProtocol, "(unsupported protocol version; SPAMC/1.0 to 1.9 are served)");
    return;
  }
  request_.command = known->command;
  request_.version_minor = version.back() - '0';
  if (TakesNoBody(request_.command) && request_.version_minor < 5) {
    // Before protocol 1.5, PING and SKIP end with their request line.
    Complete();
  } else if (request_.version_minor == 0) {
    // SPAMC/1.0 has no headers: the message follows the request line, up to the end of input.
    if (TakesNoBody(request_.command)) {
      Complete();
    } else {
      phase_ = Phase::kBody;
    }
  } else {
    phase_ = Phase::kHeaders;
  }
}

void SpamdRequestParser::ParseHeader(std::string_view line) {
  if (++header_lines_ > kMaxHeaderLines) {
    Fail(SpamdStatus::kProtocol, "(too many headers)");
    return;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) {
    Fail(SpamdStatus::kProtocol, "(header not in 'Name: value' format)");
    return;
  }
  const std::string_view name = Trim(line.substr(0, colon));
  const std::string_view value = Trim(line.substr(colon + 1));
  if (IEquals(name, "Content-length")) {
    if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos) {
      Fail(SpamdStatus::kProtocol, "(Content-Length contains non-numeric bytes)");
      return;
    }
    // Saturates: any length over the body limit is refused the same way.
    constexpr std::size_t kCap = std::size_t{1} << 62;
    std::size_t length = 0;
    for (const char digit : value) {
      length = std::min(kCap, length * 10 + static_cast<std::size_t>(digit - '0'));
    }
    if (request_.content_length && *request_.content_length != length) {
      Fail(SpamdStatus::kProtocol, "(two different Content-length headers)");
      return;
    }
    request_.content_length = length;
  } else if (IEquals(name, "User")) {
    if (value.size() > kMaxUserBytes) {
      Fail(SpamdStatus::kProtocol,
           "(User header over " + std::to_string(kMaxUserBytes) + " bytes)");
      return;
    }
    if (std::ranges::any_of(value, [](char c) {
          const auto byte = static_cast<unsigned char>(c);
          return byte < 0x20 || byte == 0x7f;
        })) {
      Fail(SpamdStatus::kProtocol, "(User header contains control chars)");
      return;
    }
    request_.user = std::string(value);
  } else if (IEquals(name, "Message-class")) {
    if (IEquals(value, "spam")) {
      request_.message_class = SpamdLabel::kSpam;
    } else if (IEquals(value, "ham")) {
      request_.message_class = SpamdLabel::kHam;
    } else {
      Fail(SpamdStatus::kProtocol, "(Message-class header contains invalid class)");
    }
  } else if (IEquals(name, "Set") || IEquals(name, "Remove")) {
    const bool set = IEquals(name, "Set");
    ForEachToken(value, [&](std::string_view token) {
      if (IEquals(token, "local")) (set ? request_.set_local : request_.remove_local) = true;
      if (IEquals(token, "remote")) (set ? request_.set_remote : request_.remove_remote) = true;
    });
  } else if (IEquals(name, "Compress")) {
    if (!IEquals(value, "zlib")) {
      Fail(SpamdStatus::kProtocol, "(compression type not supported)");
      return;
    }
    request_.compressed = true;
  }
}

void SpamdRequestParser::EndHeaders() {
  if (TakesNoBody(request_.command)) {
    Complete();
    return;
  }
  if (request_.compressed && !request_.content_length) {
    Fail(SpamdStatus::kProtocol, "(Compress requires Content-length header)");
    return;
  }
  if (request_.content_length && *request_.content_length > limits_.max_body_bytes) {
    Fail(SpamdStatus::kDataErr,
         "message over the limit of " + std::to_string(limits_.max_body_bytes) + " bytes");
    return;
  }
  if (request_.command == SpamdCommand::kTell) {
    if (request_.set_local && request_.remove_local) {
      Fail(SpamdStatus::kProtocol, "Unable to set local and remove local in the same operation.");
      return;
    }
    if (request_.set_local && !request_.message_class) {
      Fail(SpamdStatus::kProtocol, "(Set: local needs a Message-class of spam or ham)");
      return;
    }
  }
  phase_ = Phase::kBody;
  if (request_.content_length == 0u) Complete();
}

ParseStatus SpamdRequestParser::Finish() {
  if (status_ != ParseStatus::kNeedMore) return status_;
  switch (phase_) {
    case Phase::kRequestLine:
      return Fail(SpamdStatus::kProtocol, header_bytes_ == 0 && pending_.empty()
                                              ? "(closed before headers)"
                                              : "(EOF during request line)");
    case Phase::kHeaders:
      return Fail(SpamdStatus::kProtocol, "(EOF during headers)");
    case Phase::kBody:
      if (BodyRunsToEof()) return Complete();
      return Fail(SpamdStatus::kProtocol,
                  "(Content-Length mismatch: Expected " + std::to_string(*request_.content_length) +
                      " bytes, got " + std::to_string(request_.body.size()) + " bytes)");
    case Phase::kDone:
      break;
  }
  return status_;
}

std::expected<std::string, SpamdFailure> InflateZlib(std::string_view data, std::size_t max_bytes) {
  const auto corrupt = [] {
    return std::unexpected(SpamdFailure{SpamdStatus::kDataErr, "(zlib data does not inflate)"});
  };
  if (data.size() > std::numeric_limits<uInt>::max()) return corrupt();
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) {
    return std::unexpected(SpamdFailure{SpamdStatus::kSoftware, "internal error"});
  }
  std::string out;
  std::array<char, 64 * 1024> chunk;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
    stream.avail_out = static_cast<uInt>(chunk.size());
    result = inflate(&stream, Z_NO_FLUSH);
    const std::size_t produced = chunk.size() - stream.avail_out;
    if (out.size() + produced > max_bytes) {
      inflateEnd(&stream);
      return std::unexpected(
          SpamdFailure{SpamdStatus::kDataErr,
                       "message over the limit of " + std::to_string(max_bytes) + " bytes"});
    }
    out.append(chunk.data(), produced);
    // Z_BUF_ERROR with input left over cannot happen (output space was given); without input
    // it means the data ended before the stream did.
    if (result == Z_OK && produced == 0 && stream.avail_in == 0) result = Z_BUF_ERROR;
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) return corrupt();
  return out;
}

}  // namespace nbspamd::spamd
