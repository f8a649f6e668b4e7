// Fuzz target: the input is what an MTA sends on one milter connection. The first byte picks the
// options (selector, below); the rest is the byte stream, which goes through PacketDecoder and
// Conversation as MilterConnection drives them (every decoded command to Handle until a step
// closes; a classification is answered at once by a deterministic backend through Finish). Checked:
//   - the codec: every decoded command, encoded again, gives the bytes of its packet (OPTNEG: its
//     first 12), as framed independently here; decoder errors are kInvalidArgument or
//     kResourceExhausted (a length over the cap), sticky, and come exactly where the framing says
//     the bad packet is;
//   - the conversation: an error closes; OPTNEG is answered with a version from 2 to 6 and actions
//     and flags that are both offered and ours; an event whose no-reply flag was agreed gets no
//     reply, and MACRO and ABORT never do; the message handed to the backend is at most
//     max_body_bytes with one recipient per RCPT since MAIL; the end-of-body replies are header
//     edits (only with the action granted, only our two header names, values without CR, LF or
//     NUL), a quarantine (only when granted and configured), then exactly one final reply:
//     REPLYCODE "550 5.7.1 <reject_text>" only for spam at or above reject_score, TEMPFAIL only
//     for a backend error in tempfail mode, else CONTINUE;
//   - the counters: every message that reached end of body is counted exactly once as spam,
//     unsure, ham, oversized or a backend error;
//   - chunking changes nothing: the whole input at once and in chunks of 1, 3, 7 or 64 bytes give
//     the same transcript;
//   - MilterConnection agrees: the same stream over a socketpair (then the MTA's end of stream)
//     makes a real connection write exactly the replies the conversation gave, then close, with no
//     exception at its boundary and no timeout.
// Built with libFuzzer when NBSPAMD_FUZZ is on; tokenizer/fuzz/replay_main.cc runs saved inputs
// without it.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "milter/backend.h"
#include "milter/connection.h"
#include "milter/conversation.h"
#include "milter/counters.h"
#include "milter/options.h"
#include "milter/protocol.h"

namespace {

using namespace nbspamd;
using namespace nbspamd::milter;

// The most commands one input may drive; a packet is at least 5 bytes, so this is a bound only
// for long inputs.
constexpr int kMaxCommands = 4096;

[[noreturn]] void Fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "milter contract broken: %s [%.*s]\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void Check(bool condition, const char* what, std::string_view detail = {}) {
  if (!condition) Fail(what, detail);
}

struct Setup {
  ConversationOptions conversation;
  std::size_t max_packet_bytes = std::size_t{1} << 20;
  std::size_t chunk = 1;
};

// Bit 0: reject spam scoring 5 or more. Bit 1: quarantine spam scoring 0 or more. Bit 2:
// max_body_bytes of 200 (so short inputs reach the oversized path). Bit 3: leave incoming copies
// of our headers alone. Bit 4: tempfail on backend errors. Bit 5: a packet cap of 64 bytes. Bits
// 6-7: the chunk size of the second run (1, 3, 7, 64).
Setup SetupFor(std::uint8_t selector) {
  Setup setup;
  if ((selector & 0x01) != 0) setup.conversation.reject_score = 5.0;
  if ((selector & 0x02) != 0) setup.conversation.quarantine_score = 0.0;
  if ((selector & 0x04) != 0) setup.conversation.max_body_bytes = 200;
  setup.conversation.remove_incoming_headers = (selector & 0x08) == 0;
  if ((selector & 0x10) != 0) setup.conversation.fail_mode = FailMode::kTempfail;
  if ((selector & 0x20) != 0) setup.max_packet_bytes = 64;
  constexpr std::size_t kChunks[] = {1, 3, 7, 64};
  setup.chunk = kChunks[selector >> 6];
  if (!ValidateConversationOptions(setup.conversation))
    Fail("the fuzzer's own options are invalid");
  return setup;
}

// The deterministic backend: "FAIL" in the message is an error, "viagra" spam scoring 10, "cheap"
// spam scoring 1 (below the reject score), "maybe" unsure; anything else ham.
std::expected<MilterVerdict, Error> VerdictFor(const std::string& message) {
  if (message.find("FAIL") != std::string::npos) {
    return std::unexpected(Error{ErrorCode::kUnavailable, "backend down"});
  }
  MilterVerdict verdict;
  if (message.find("viagra") != std::string::npos) {
    verdict = {.score = 10.0, .verdict = MilterVerdict::Kind::kSpam, .spam_confidence = 0.99};
  } else if (message.find("cheap") != std::string::npos) {
    verdict = {.score = 1.0, .verdict = MilterVerdict::Kind::kSpam, .spam_confidence = {}};
  } else if (message.find("maybe") != std::string::npos) {
    verdict = {.score = 0.0, .verdict = MilterVerdict::Kind::kUnsure, .spam_confidence = 0.5};
  } else {
    verdict = {.score = -5.0, .verdict = MilterVerdict::Kind::kHam, .spam_confidence = {}};
  }
  return verdict;
}

void AppendUint32(std::uint32_t value, std::string& out) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void AppendString(std::string_view value, std::string& out) {
  out.append(value);
  out.push_back('\0');
}

std::uint32_t ReadUint32(std::string_view bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

// A decoded command back to its code and data, as the MTA would have sent it.
std::pair<char, std::string> Reencode(const Command& command) {
  std::string data;
  const char code = std::visit(
      [&](const auto& c) -> char {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, OptionNegotiation>) {
          AppendUint32(c.version, data);
          AppendUint32(c.actions, data);
          AppendUint32(c.protocol, data);
          return kCmdOptionNegotiation;
        } else if constexpr (std::is_same_v<T, Macros>) {
          data.push_back(c.for_command);
          for (const auto& [name, value] : c.values) {
            AppendString(name, data);
            AppendString(value, data);
          }
          return kCmdMacro;
        } else if constexpr (std::is_same_v<T, Connect>) {
          AppendString(c.hostname, data);
          data.push_back(c.family);
          if (c.family != 'U') {
            data.push_back(static_cast<char>(c.port >> 8));
            data.push_back(static_cast<char>(c.port & 0xff));
            AppendString(c.address, data);
          }
          return kCmdConnect;
        } else if constexpr (std::is_same_v<T, Helo>) {
          AppendString(c.name, data);
          return kCmdHelo;
        } else if constexpr (std::is_same_v<T, Mail> || std::is_same_v<T, Rcpt>) {
          for (const auto& arg : c.args) AppendString(arg, data);
          return std::is_same_v<T, Mail> ? kCmdMail : kCmdRcpt;
        } else if constexpr (std::is_same_v<T, Header>) {
          AppendString(c.name, data);
          AppendString(c.value, data);
          return kCmdHeader;
        } else if constexpr (std::is_same_v<T, UnknownCommand>) {
          AppendString(c.line, data);
          return kCmdUnknown;
        } else if constexpr (std::is_same_v<T, Body>) {
          data = c.chunk;
          return kCmdBody;
        } else if constexpr (std::is_same_v<T, EndOfBody>) {
          data = c.chunk;
          return kCmdEndOfBody;
        } else if constexpr (std::is_same_v<T, Data>) {
          return kCmdData;
        } else if constexpr (std::is_same_v<T, EndOfHeaders>) {
          return kCmdEndOfHeaders;
        } else if constexpr (std::is_same_v<T, Abort>) {
          return kCmdAbort;
        } else if constexpr (std::is_same_v<T, Quit>) {
          return kCmdQuit;
        } else {
          static_assert(std::is_same_v<T, QuitNewConnection>);
          return kCmdQuitNewConn;
        }
      },
      command);
  return {code, std::move(data)};
}

// The no-reply flag of an event that is only ever continued, 0 for the others.
std::uint32_t NoReplyFlag(const Command& command) {
  if (std::holds_alternative<Connect>(command)) return kProtoNoReplyConnect;
  if (std::holds_alternative<Helo>(command)) return kProtoNoReplyHelo;
  if (std::holds_alternative<Mail>(command)) return kProtoNoReplyMail;
  if (std::holds_alternative<Rcpt>(command)) return kProtoNoReplyRcpt;
  if (std::holds_alternative<Data>(command)) return kProtoNoReplyData;
  if (std::holds_alternative<Header>(command)) return kProtoNoReplyHeader;
  if (std::holds_alternative<EndOfHeaders>(command)) return kProtoNoReplyEoh;
  if (std::holds_alternative<Body>(command)) return kProtoNoReplyBody;
  if (std::holds_alternative<UnknownCommand>(command)) return kProtoNoReplyUnknown;
  return 0;
}

bool IsOurHeader(const ConversationOptions& options, std::string_view name) {
  return name == options.flag_header || name == options.status_header;
}

// Another header of nbspamd's own names (any X-Nbspamd*, spamd's X-Spam-Scan-Id), which the
// milter may only delete.
bool IsOurOtherHeader(std::string_view name) {
  const auto lower = [](std::string_view text) {
    std::string out(text);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return out;
  };
  const std::string lowered = lower(name);
  return lowered.starts_with("x-nbspamd") || lowered == "x-spam-scan-id";
}

// Splits a header edit's data (after `skip` index bytes) into name and value; checks both.
void CheckHeaderEdit(const ConversationOptions& options, const Reply& reply, std::size_t skip) {
  Check(reply.data.size() > skip, "header edit without data");
  const std::string_view rest = std::string_view(reply.data).substr(skip);
  const std::size_t nul = rest.find('\0');
  Check(nul != std::string_view::npos, "header edit name without NUL", reply.data);
  const std::string_view name = rest.substr(0, nul);
  const std::string_view value = rest.substr(nul + 1);
  Check(!value.empty() && value.back() == '\0', "header edit value without NUL", reply.data);
  const std::string_view text = value.substr(0, value.size() - 1);
  Check(IsOurHeader(options, name) || (IsOurOtherHeader(name) && value.size() == 1),
        "edit of a header that is not ours, or more than a deletion of one of our other names",
        name);
  Check(text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos,
        "header value with CR, LF or NUL", text);
}

void CheckFinish(const Setup& setup, const Conversation& conversation,
                 const std::expected<MilterVerdict, Error>& verdict,
                 const std::vector<Reply>& replies) {
  const ConversationOptions& options = setup.conversation;
  Check(!replies.empty(), "no reply at end of body");
  const Reply& last = replies.back();
  const bool spam = verdict && verdict->verdict == MilterVerdict::Kind::kSpam;
  const bool reject = spam && options.reject_score && *verdict->score >= *options.reject_score;
  if (!verdict) {
    Check(replies.size() == 1, "edits on a backend error");
    Check(last.code == (options.fail_mode == FailMode::kTempfail ? kReplyTempfail : kReplyContinue),
          "backend error not answered per the fail mode");
    return;
  }
  if (reject) {
    Check(replies.size() == 1, "edits with a rejection");
    Check(last == ReplyCodeReply("550 5.7.1 " + options.reject_text), "wrong rejection");
    return;
  }
  Check(last.code == kReplyContinue, "final reply is not CONTINUE");
  bool quarantined = false;
  for (std::size_t i = 0; i + 1 < replies.size(); ++i) {
    const Reply& reply = replies[i];
    switch (reply.code) {
      case kReplyAddHeader:
        Check((conversation.actions() & kActionAddHeaders) != 0, "ADDHEADER not granted");
        CheckHeaderEdit(options, reply, 0);
        break;
      case kReplyChangeHeader:
        Check((conversation.actions() & kActionChangeHeaders) != 0, "CHGHEADER not granted");
        Check(options.remove_incoming_headers, "CHGHEADER when told to leave headers alone");
        Check(ReadUint32(reply.data) >= 1, "CHGHEADER index 0");
        CheckHeaderEdit(options, reply, 4);
        break;
      case kReplyQuarantine:
        Check(!quarantined, "two quarantines");
        quarantined = true;
        Check((conversation.actions() & kActionQuarantine) != 0, "QUARANTINE not granted");
        Check(spam && options.quarantine_score.has_value(), "QUARANTINE of a message not spam");
        Check(reply == QuarantineReply(options.quarantine_reason), "wrong quarantine reason");
        Check(i + 2 == replies.size(), "QUARANTINE not just before the final reply");
        break;
      default:
        Fail("unexpected reply at end of body", ReplyName(reply.code));
    }
  }
}

// What one run did, to compare runs: every reply on the wire, the classifications and the end.
struct Transcript {
  std::string text;
  std::string wire;      // Just the replies, encoded: what a connection would write.
  bool complete = true;  // False when kMaxCommands cut the run short.
  bool operator==(const Transcript&) const = default;
};

Transcript Run(const Setup& setup, std::string_view stream, std::size_t chunk) {
  Transcript transcript;
  MilterCounters counters;
  Conversation conversation(setup.conversation, counters);
  PacketDecoder decoder(setup.max_packet_bytes);
  std::size_t framed = 0;  // Where the next packet starts, by our own framing.
  std::size_t fed = 0;
  std::uint32_t offered_actions = 0;
  std::uint32_t offered_protocol = 0;
  std::size_t recipients = 0;  // RCPT since MAIL.
  int commands = 0;
  bool done = false;
  while (!done) {
    auto next = decoder.Next();
    if (!next) {
      const Error& error = next.error();
      // Our framing must agree on where it failed and why.
      Check(stream.size() - framed >= 4, "decoder failed before a whole length arrived");
      const std::uint32_t length = ReadUint32(stream.substr(framed));
      if (error.code == ErrorCode::kResourceExhausted) {
        Check(length > setup.max_packet_bytes, "length error for a length within the cap");
      } else {
        Check(error.code == ErrorCode::kInvalidArgument, "decoder error of another code",
              ErrorCodeName(error.code));
        if (length != 0) {
          Check(length <= setup.max_packet_bytes && fed - framed >= 4 + std::size_t{length},
                "decode error before the packet arrived");
        }
      }
      auto again = decoder.Next();
      Check(!again && again.error().code == error.code, "decoder error is not sticky");
      transcript.text += "|decode error " + std::string(ErrorCodeName(error.code));
      break;
    }
    if (!*next) {
      if (fed == stream.size()) {
        Check(decoder.HasPartialPacket() == (framed < stream.size()),
              "HasPartialPacket disagrees with the framing");
        transcript.text += decoder.HasPartialPacket() ? "|eof inside a packet" : "|eof";
        break;
      }
      const std::size_t take = std::min(chunk, stream.size() - fed);
      decoder.Feed(stream.substr(fed, take));
      fed += take;
      continue;
    }
    Command& command = **next;
    // The packet as framed here.
    Check(stream.size() - framed >= 5, "a command from less than a packet");
    const std::uint32_t length = ReadUint32(stream.substr(framed));
    Check(length >= 1 && length <= setup.max_packet_bytes, "a command from a bad length");
    const std::string_view packet = stream.substr(framed + 4, length);
    Check(packet.size() == length && fed >= framed + 4 + length, "a command before its bytes");
    framed += 4 + std::size_t{length};
    const auto [code, data] = Reencode(command);
    Check(code == packet[0], "decoded as another command", CommandName(packet[0]));
    if (code == kCmdOptionNegotiation) {
      Check(packet.size() >= 13 && data == packet.substr(1, 12), "OPTNEG not as sent");
    } else {
      Check(data == packet.substr(1), "decoded data not as sent", CommandName(code));
    }
    if (++commands > kMaxCommands) {
      transcript.complete = false;
      break;
    }

    if (const auto* offer = std::get_if<OptionNegotiation>(&command)) {
      offered_actions = offer->actions;
      offered_protocol = offer->protocol;
    }
    if (std::holds_alternative<Mail>(command)) recipients = 0;
    if (std::holds_alternative<Rcpt>(command)) ++recipients;
    const std::uint32_t no_reply = NoReplyFlag(command);
    const bool is_optneg = std::holds_alternative<OptionNegotiation>(command);
    const bool never_answered =
        std::holds_alternative<Macros>(command) || std::holds_alternative<Abort>(command) ||
        std::holds_alternative<QuitNewConnection>(command) || std::holds_alternative<Quit>(command);
    Conversation::Step step = conversation.Handle(std::move(command));
    Check(!step.error || step.close, "an error that does not close");
    Check(!step.error || step.error->code == ErrorCode::kInvalidArgument,
          "conversation error of another code");
    if (step.error) {
      Check(step.replies.empty() && !step.classify, "replies with a protocol error");
      transcript.text += "|protocol error";
      break;
    }
    for (const Reply& reply : step.replies) {
      AppendEncoded(reply, transcript.text);
      AppendEncoded(reply, transcript.wire);
    }
    if (is_optneg) {
      Check(step.replies.size() == 1 && step.replies[0].code == kReplyOptionNegotiation,
            "OPTNEG not answered with OPTNEG");
      const std::string& answer = step.replies[0].data;
      Check(answer.size() == 12, "OPTNEG answer not 12 bytes");
      const std::uint32_t version = ReadUint32(answer);
      Check(version >= kMinProtocolVersion && version <= kProtocolVersion, "OPTNEG version");
      Check((ReadUint32(answer.substr(4)) & ~offered_actions) == 0, "actions not offered");
      Check((ReadUint32(answer.substr(8)) & ~offered_protocol) == 0, "flags not offered");
      Check(ReadUint32(answer.substr(4)) == conversation.actions() &&
                ReadUint32(answer.substr(8)) == conversation.protocol(),
            "OPTNEG answer is not what the conversation keeps");
    } else if (never_answered) {
      Check(step.replies.empty() && !step.classify, "an answer to MACRO, ABORT or QUIT");
    } else if (no_reply != 0) {
      const bool silent = (conversation.protocol() & no_reply) != 0;
      Check(step.replies.size() == (silent ? 0u : 1u), "reply despite the no-reply flag");
      if (!silent) Check(step.replies[0] == ContinueReply(), "event answered but with CONTINUE");
    }
    if (step.classify) {
      Check(conversation.AwaitingVerdict(), "classify without awaiting the verdict");
      const ClassifyRequest& request = *step.classify;
      Check(request.message.size() <= setup.conversation.max_body_bytes,
            "message over max_body_bytes");
      Check(request.context.recipients.size() == recipients, "recipients lost or invented");
      auto verdict = VerdictFor(request.message);
      transcript.text += "|classify " + std::to_string(request.message.size()) + " " +
                         request.context.sender + " " + request.context.message_id + " " +
                         request.context.queue_id + " " + request.context.user;
      std::vector<Reply> replies = conversation.Finish(verdict);
      Check(!conversation.AwaitingVerdict() && !conversation.InMessage(),
            "message kept after Finish");
      CheckFinish(setup, conversation, verdict, replies);
      for (const Reply& reply : replies) {
        AppendEncoded(reply, transcript.text);
        AppendEncoded(reply, transcript.wire);
      }
      Check(counters.messages == counters.spam + counters.unsure + counters.ham +
                                     counters.oversized + counters.backend_errors,
            "a message counted other than once");
    } else {
      Check(!conversation.AwaitingVerdict(), "awaiting a verdict that was not asked for");
    }
    if (step.close) {
      transcript.text += "|close";
      done = true;
    }
  }
  Check(counters.messages == counters.spam + counters.unsure + counters.ham + counters.oversized +
                                 counters.backend_errors,
        "a message counted other than once");
  Check(counters.rejected <= counters.spam && counters.quarantined <= counters.spam &&
            counters.tempfailed <= counters.backend_errors,
        "counters out of step");
  return transcript;
}

// The deterministic backend behind the seam, answering before ClassifyAsync returns.
class FuzzBackend : public MilterBackend {
 public:
  void ClassifyAsync(std::string message, MessageContext, ClassifyDone done) override {
    done(VerdictFor(message));
  }
};

// The same stream through a real MilterConnection over a socketpair, on this thread: the stream
// written as fast as the connection reads it, then our side shut for writing (the MTA is gone),
// until the connection closes. Returns every byte it wrote. Checks that it closes (no hang) and
// that no exception reached its boundary.
std::string RunConnection(const Setup& setup, std::string_view stream) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) Fail("socketpair");
  const int mta = fds[1];
  ::fcntl(mta, F_SETFL, ::fcntl(mta, F_GETFL) | O_NONBLOCK);
  boost::asio::io_context io;
  MilterConnection::Socket socket(io);
  socket.assign(boost::asio::generic::stream_protocol(AF_UNIX, 0), fds[0]);
  FuzzBackend backend;
  MilterCounters counters;
  auto context = std::make_shared<ConnectionContext>();
  context->conversation = setup.conversation;
  context->connection.max_packet_bytes = setup.max_packet_bytes;
  context->backend = &backend;
  context->counters = &counters;
  bool closed = false;
  {
    auto connection = std::make_shared<MilterConnection>(
        std::move(socket), context, [&closed](MilterConnection*) { closed = true; });
    connection->Run();
  }
  std::string written;
  std::size_t sent = 0;
  bool shut = false;
  char buffer[65536];
  // `closed` is set by the connection's destructor, inside io.poll().
  for (int spins = 0;; ++spins) {
    if (closed) break;
    if (spins > 1'000'000) Fail("the connection neither closes nor waits for bytes");
    if (sent < stream.size()) {
      const ssize_t n = ::send(mta, stream.data() + sent, stream.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) sent = stream.size();  // It closed.
    } else if (!shut) {
      ::shutdown(mta, SHUT_WR);
      shut = true;
    }
    io.restart();
    io.poll();
    for (ssize_t n; (n = ::recv(mta, buffer, sizeof buffer, 0)) > 0;) {
      written.append(buffer, static_cast<std::size_t>(n));
    }
  }
  for (ssize_t n; (n = ::recv(mta, buffer, sizeof buffer, 0)) > 0;) {
    written.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(mta);
  Check(counters.internal_errors == 0, "an exception reached the connection's boundary");
  Check(counters.timeouts == 0, "a read timeout on a connection whose peer ended");
  return written;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Setup setup = SetupFor(data[0]);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Transcript whole = Run(setup, stream, stream.size() + 1);
  const Transcript chunked = Run(setup, stream, setup.chunk);
  if (!(whole == chunked)) Fail("chunking changed the transcript", chunked.text);
  if (whole.complete) {
    const std::string written = RunConnection(setup, stream);
    if (written != whole.wire)
      Fail("the connection wrote other replies than the conversation gave");
  }
  return 0;
}
