#include "milter/protocol.h"

#include <cstdio>

namespace nbspamd::milter {

namespace {

std::unexpected<Error> Malformed(char code, std::string_view what) {
  std::string message = "malformed milter ";
  message += CommandName(code);
  message += ": ";
  message += what;
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

std::uint32_t ReadUint32(std::string_view bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

void AppendUint32(std::uint32_t value, std::string& out) {
  out.push_back(static_cast<char>((value >> 24) & 0xff));
  out.push_back(static_cast<char>((value >> 16) & 0xff));
  out.push_back(static_cast<char>((value >> 8) & 0xff));
  out.push_back(static_cast<char>(value & 0xff));
}

void AppendString(std::string_view value, std::string& out) {
  out.append(value);
  out.push_back('\0');
}

// Splits data made only of NUL-terminated strings. nullopt when the last one has no NUL.
std::optional<std::vector<std::string>> SplitStrings(std::string_view data) {
  std::vector<std::string> strings;
  while (!data.empty()) {
    const std::size_t nul = data.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    strings.emplace_back(data.substr(0, nul));
    data.remove_prefix(nul + 1);
  }
  return strings;
}

// Exactly `count` NUL-terminated strings.
std::expected<std::vector<std::string>, Error> ExactStrings(char code, std::string_view data,
                                                            std::size_t count) {
  auto strings = SplitStrings(data);
  if (!strings) return Malformed(code, "a string without its terminating NUL");
  if (strings->size() != count) {
    return Malformed(code, "expected " + std::to_string(count) + " strings, got " +
                               std::to_string(strings->size()));
  }
  return std::move(*strings);
}

std::expected<Command, Error> DecodeConnect(std::string_view data) {
  Connect connect;
  const std::size_t nul = data.find('\0');
  if (nul == std::string_view::npos) return Malformed(kCmdConnect, "hostname without its NUL");
  connect.hostname = std::string(data.substr(0, nul));
  data.remove_prefix(nul + 1);
  if (data.empty()) return Malformed(kCmdConnect, "no address family");
  connect.family = data[0];
  data.remove_prefix(1);
  if (connect.family == 'U') {  // SMFIA_UNKNOWN: nothing follows.
    if (!data.empty()) return Malformed(kCmdConnect, "data after an unknown address family");
    return connect;
  }
  if (connect.family != '4' && connect.family != '6' && connect.family != 'L') {
    return Malformed(kCmdConnect, "unknown address family");
  }
  if (data.size() < 2) return Malformed(kCmdConnect, "no port");
  const auto* port = reinterpret_cast<const unsigned char*>(data.data());
  connect.port = static_cast<std::uint16_t>((port[0] << 8) | port[1]);
  data.remove_prefix(2);
  auto address = ExactStrings(kCmdConnect, data, 1);
  if (!address) return std::unexpected(address.error());
  connect.address = std::move((*address)[0]);
  return connect;
}

template <typename T>
std::expected<Command, Error> Empty(char code, std::string_view data) {
  if (!data.empty()) return Malformed(code, "unexpected data");
  return T{};
}

}  // namespace

std::expected<Command, Error> DecodeCommand(char code, std::string_view data) {
  switch (code) {
    case kCmdOptionNegotiation: {
      // Three words; later versions may append more, which we ignore as libmilter does.
      if (data.size() < 12) return Malformed(code, "shorter than three 32-bit words");
      return OptionNegotiation{ReadUint32(data), ReadUint32(data.substr(4)),
                               ReadUint32(data.substr(8))};
    }
    case kCmdMacro: {
      if (data.empty()) return Malformed(code, "no command code");
      Macros macros{.for_command = data[0], .values = {}};
      auto strings = SplitStrings(data.substr(1));
      if (!strings) return Malformed(code, "a string without its terminating NUL");
      if (strings->size() % 2 != 0) return Malformed(code, "a macro name without a value");
      for (std::size_t i = 0; i < strings->size(); i += 2) {
        macros.values.emplace_back(std::move((*strings)[i]), std::move((*strings)[i + 1]));
      }
      return macros;
    }
    case kCmdConnect:
      return DecodeConnect(data);
    case kCmdHelo: {
      auto strings = ExactStrings(code, data, 1);
      if (!strings) return std::unexpected(strings.error());
      return Helo{std::move((*strings)[0])};
    }
    case kCmdMail:
    case kCmdRcpt: {
      auto strings = SplitStrings(data);
      if (!strings) return Malformed(code, "a string without its terminating NUL");
      if (strings->empty()) return Malformed(code, "no address");
      if (code == kCmdMail) return Mail{std::move(*strings)};
      return Rcpt{std::move(*strings)};
    }
    case kCmdHeader: {
      auto strings = ExactStrings(code, data, 2);
      if (!strings) return std::unexpected(strings.error());
      return Header{std::move((*strings)[0]), std::move((*strings)[1])};
    }
    case kCmdUnknown: {
      auto strings = ExactStrings(code, data, 1);
      if (!strings) return std::unexpected(strings.error());
      return UnknownCommand{std::move((*strings)[0])};
    }
    case kCmdBody:
      return Body{std::string(data)};
    case kCmdEndOfBody:
      return EndOfBody{std::string(data)};
    case kCmdData:
      return Empty<Data>(code, data);
    case kCmdEndOfHeaders:
      return Empty<EndOfHeaders>(code, data);
    case kCmdAbort:
      return Empty<Abort>(code, data);
    case kCmdQuit:
      return Empty<Quit>(code, data);
    case kCmdQuitNewConn:
      return Empty<QuitNewConnection>(code, data);
    default:
      break;
  }
  const auto byte = static_cast<unsigned char>(code);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", byte);
  return MakeError(ErrorCode::kInvalidArgument, std::string("unknown milter command ") + hex);
}

void PacketDecoder::Feed(std::string_view bytes) {
  if (error_) return;
  // Drop what was parsed before growing the buffer, so it stays about one packet long.
  if (offset_ > 0 && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ > 4096 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(bytes);
}

std::expected<std::optional<Command>, Error> PacketDecoder::Next() {
  if (error_) return std::unexpected(*error_);
  const std::string_view pending = std::string_view(buffer_).substr(offset_);
  if (pending.size() < 4) return std::nullopt;
  const std::uint32_t length = ReadUint32(pending);
  if (length == 0) {
    error_ = Error{ErrorCode::kInvalidArgument, "milter packet of length 0"};
    return std::unexpected(*error_);
  }
  if (length > max_packet_bytes_) {
    error_ = Error{ErrorCode::kResourceExhausted, "milter packet of " + std::to_string(length) +
                                                      " bytes, above the limit of " +
                                                      std::to_string(max_packet_bytes_)};
    return std::unexpected(*error_);
  }
  if (pending.size() - 4 < length) return std::nullopt;
  const char code = pending[4];
  auto command = DecodeCommand(code, pending.substr(5, length - 1));
  offset_ += 4 + std::size_t{length};
  if (!command) {
    error_ = command.error();
    return std::unexpected(*error_);
  }
  return std::optional<Command>(std::move(*command));
}

void PacketDecoder::Reset() {
  buffer_.clear();
  offset_ = 0;
  error_.reset();
}

Reply ContinueReply() { return {kReplyContinue, {}}; }
Reply AcceptReply() { return {kReplyAccept, {}}; }
Reply RejectReply() { return {kReplyReject, {}}; }
Reply TempfailReply() { return {kReplyTempfail, {}}; }
Reply ProgressReply() { return {kReplyProgress, {}}; }
Reply SkipReply() { return {kReplySkip, {}}; }

Reply OptionNegotiationReply(std::uint32_t version, std::uint32_t actions, std::uint32_t protocol) {
  Reply reply{kReplyOptionNegotiation, {}};
  AppendUint32(version, reply.data);
  AppendUint32(actions, reply.data);
  AppendUint32(protocol, reply.data);
  return reply;
}

Reply ReplyCodeReply(std::string_view smtp_reply) {
  Reply reply{kReplyReplyCode, {}};
  AppendString(smtp_reply, reply.data);
  return reply;
}

Reply AddHeaderReply(std::string_view name, std::string_view value) {
  Reply reply{kReplyAddHeader, {}};
  AppendString(name, reply.data);
  AppendString(value, reply.data);
  return reply;
}

Reply InsertHeaderReply(std::uint32_t index, std::string_view name, std::string_view value) {
  Reply reply{kReplyInsertHeader, {}};
  AppendUint32(index, reply.data);
  AppendString(name, reply.data);
  AppendString(value, reply.data);
  return reply;
}

Reply ChangeHeaderReply(std::uint32_t index, std::string_view name, std::string_view value) {
  Reply reply{kReplyChangeHeader, {}};
  AppendUint32(index, reply.data);
  AppendString(name, reply.data);
  AppendString(value, reply.data);
  return reply;
}

Reply QuarantineReply(std::string_view reason) {
  Reply reply{kReplyQuarantine, {}};
  AppendString(reason, reply.data);
  return reply;
}

void AppendEncoded(const Reply& reply, std::string& out) {
  AppendUint32(static_cast<std::uint32_t>(reply.data.size() + 1), out);
  out.push_back(reply.code);
  out.append(reply.data);
}

std::string Encode(const Reply& reply) {
  std::string out;
  out.reserve(5 + reply.data.size());
  AppendEncoded(reply, out);
  return out;
}

std::string_view CommandName(char code) {
  switch (code) {
    case kCmdAbort:
      return "SMFIC_ABORT";
    case kCmdBody:
      return "SMFIC_BODY";
    case kCmdConnect:
      return "SMFIC_CONNECT";
    case kCmdMacro:
      return "SMFIC_MACRO";
    case kCmdEndOfBody:
      return "SMFIC_BODYEOB";
    case kCmdHelo:
      return "SMFIC_HELO";
    case kCmdQuitNewConn:
      return "SMFIC_QUIT_NC";
    case kCmdHeader:
      return "SMFIC_HEADER";
    case kCmdMail:
      return "SMFIC_MAIL";
    case kCmdEndOfHeaders:
      return "SMFIC_EOH";
    case kCmdOptionNegotiation:
      return "SMFIC_OPTNEG";
    case kCmdQuit:
      return "SMFIC_QUIT";
    case kCmdRcpt:
      return "SMFIC_RCPT";
    case kCmdData:
      return "SMFIC_DATA";
    case kCmdUnknown:
      return "SMFIC_UNKNOWN";
    default:
      return "unknown command";
  }
}

std::string_view ReplyName(char code) {
  switch (code) {
    case kReplyAccept:
      return "SMFIR_ACCEPT";
    case kReplyContinue:
      return "SMFIR_CONTINUE";
    case kReplyAddHeader:
      return "SMFIR_ADDHEADER";
    case kReplyInsertHeader:
      return "SMFIR_INSHEADER";
    case kReplyChangeHeader:
      return "SMFIR_CHGHEADER";
    case kReplyProgress:
      return "SMFIR_PROGRESS";
    case kReplyQuarantine:
      return "SMFIR_QUARANTINE";
    case kReplyReject:
      return "SMFIR_REJECT";
    case kReplySkip:
      return "SMFIR_SKIP";
    case kReplyTempfail:
      return "SMFIR_TEMPFAIL";
    case kReplyReplyCode:
      return "SMFIR_REPLYCODE";
    case kReplyOptionNegotiation:
      return "SMFIC_OPTNEG";
    default:
      return "unknown reply";
  }
}

}  // namespace nbspamd::milter
