// The milter wire protocol (version 6, as Postfix and Sendmail 8.14+ speak it), from the filter's
// side: an incremental decoder for the MTA's commands and an encoder for the filter's replies.
// Pure: no I/O, no clock, no threads.
//
//   PacketDecoder decoder(/*max_packet_bytes=*/512 << 10);
//   decoder.Feed(bytes_from_the_socket);
//   while (true) {
//     auto command = decoder.Next();
//     if (!command) return Close(command.error());  // kInvalidArgument or kResourceExhausted
//     if (!*command) break;                          // needs more bytes
//     Handle(**command);
//   }
//   socket.Write(Encode(ContinueReply()));
//
// Every packet, both ways, is a 4-byte big-endian length, then that many bytes: a one-byte
// command (or reply) code and its data. Strings in the data are NUL-terminated. The codes and
// bit values below are those of Sendmail's libmilter/mfdef.h, which Postfix repeats in
// src/milter/milter8.c ("Commands from MTA to filter", "Responses from filter to MTA",
// SMFIP_*, SMFIF_*); they are the wire format and must never change.
#ifndef NBSPAMD_MILTER_PROTOCOL_H_
#define NBSPAMD_MILTER_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/error.h"

namespace nbspamd::milter {

// The protocol version this implementation speaks (SMFI_PROT_VERSION in mfdef.h).
inline constexpr std::uint32_t kProtocolVersion = 6;
// The oldest MTA version accepted: version 2 is the first with option negotiation as below.
inline constexpr std::uint32_t kMinProtocolVersion = 2;

// Commands from the MTA (SMFIC_* in mfdef.h and milter8.c).
inline constexpr char kCmdAbort = 'A';         // SMFIC_ABORT: forget the current message.
inline constexpr char kCmdBody = 'B';          // SMFIC_BODY: a body chunk.
inline constexpr char kCmdConnect = 'C';       // SMFIC_CONNECT: the SMTP client's address.
inline constexpr char kCmdMacro = 'D';         // SMFIC_MACRO: macros for the next command.
inline constexpr char kCmdEndOfBody = 'E';     // SMFIC_BODYEOB: end of message; decide now.
inline constexpr char kCmdHelo = 'H';          // SMFIC_HELO
inline constexpr char kCmdQuitNewConn = 'K';   // SMFIC_QUIT_NC: quit, a new connection follows.
inline constexpr char kCmdHeader = 'L';        // SMFIC_HEADER: one header field.
inline constexpr char kCmdMail = 'M';          // SMFIC_MAIL: MAIL FROM and its ESMTP arguments.
inline constexpr char kCmdEndOfHeaders = 'N';  // SMFIC_EOH
inline constexpr char kCmdOptionNegotiation = 'O';  // SMFIC_OPTNEG
inline constexpr char kCmdQuit = 'Q';               // SMFIC_QUIT: close the connection.
inline constexpr char kCmdRcpt = 'R';               // SMFIC_RCPT: RCPT TO and its arguments.
inline constexpr char kCmdData = 'T';               // SMFIC_DATA
inline constexpr char kCmdUnknown = 'U';            // SMFIC_UNKNOWN: an unknown SMTP command.

// Replies from the filter (SMFIR_* in mfdef.h and milter8.c).
inline constexpr char kReplyAccept = 'a';             // SMFIR_ACCEPT
inline constexpr char kReplyContinue = 'c';           // SMFIR_CONTINUE
inline constexpr char kReplyAddHeader = 'h';          // SMFIR_ADDHEADER: name\0 value\0
inline constexpr char kReplyInsertHeader = 'i';       // SMFIR_INSHEADER: index, name\0 value\0
inline constexpr char kReplyChangeHeader = 'm';       // SMFIR_CHGHEADER: index, name\0 value\0
inline constexpr char kReplyProgress = 'p';           // SMFIR_PROGRESS
inline constexpr char kReplyQuarantine = 'q';         // SMFIR_QUARANTINE: reason\0
inline constexpr char kReplyReject = 'r';             // SMFIR_REJECT
inline constexpr char kReplySkip = 's';               // SMFIR_SKIP: no more of this event type.
inline constexpr char kReplyTempfail = 't';           // SMFIR_TEMPFAIL
inline constexpr char kReplyReplyCode = 'y';          // SMFIR_REPLYCODE: "550 5.7.1 text"\0
inline constexpr char kReplyOptionNegotiation = 'O';  // The answer to SMFIC_OPTNEG.

// Actions the filter may take at end of message (SMFIF_*), negotiated in OPTNEG.
inline constexpr std::uint32_t kActionAddHeaders = 1u << 0;     // SMFIF_ADDHDRS
inline constexpr std::uint32_t kActionChangeHeaders = 1u << 4;  // SMFIF_CHGHDRS
inline constexpr std::uint32_t kActionQuarantine = 1u << 5;     // SMFIF_QUARANTINE

// Protocol flags (SMFIP_*): events the MTA need not send, and events the filter will not answer
// ("no reply", SMFIP_NR_*, new in version 6). The MTA offers a mask; the filter answers with the
// subset it wants.
inline constexpr std::uint32_t kProtoNoConnect = 1u << 0;      // SMFIP_NOCONNECT
inline constexpr std::uint32_t kProtoNoHelo = 1u << 1;         // SMFIP_NOHELO
inline constexpr std::uint32_t kProtoNoMail = 1u << 2;         // SMFIP_NOMAIL
inline constexpr std::uint32_t kProtoNoRcpt = 1u << 3;         // SMFIP_NORCPT
inline constexpr std::uint32_t kProtoNoBody = 1u << 4;         // SMFIP_NOBODY
inline constexpr std::uint32_t kProtoNoHeaders = 1u << 5;      // SMFIP_NOHDRS
inline constexpr std::uint32_t kProtoNoEoh = 1u << 6;          // SMFIP_NOEOH
inline constexpr std::uint32_t kProtoNoReplyHeader = 1u << 7;  // SMFIP_NR_HDR
inline constexpr std::uint32_t kProtoNoUnknown = 1u << 8;      // SMFIP_NOUNKNOWN
inline constexpr std::uint32_t kProtoNoData = 1u << 9;         // SMFIP_NODATA
inline constexpr std::uint32_t kProtoSkip = 1u << 10;          // SMFIP_SKIP: MTA takes SMFIR_SKIP.
inline constexpr std::uint32_t kProtoRcptRejected = 1u << 11;  // SMFIP_RCPT_REJ
inline constexpr std::uint32_t kProtoNoReplyConnect = 1u << 12;      // SMFIP_NR_CONN
inline constexpr std::uint32_t kProtoNoReplyHelo = 1u << 13;         // SMFIP_NR_HELO
inline constexpr std::uint32_t kProtoNoReplyMail = 1u << 14;         // SMFIP_NR_MAIL
inline constexpr std::uint32_t kProtoNoReplyRcpt = 1u << 15;         // SMFIP_NR_RCPT
inline constexpr std::uint32_t kProtoNoReplyData = 1u << 16;         // SMFIP_NR_DATA
inline constexpr std::uint32_t kProtoNoReplyUnknown = 1u << 17;      // SMFIP_NR_UNKN
inline constexpr std::uint32_t kProtoNoReplyEoh = 1u << 18;          // SMFIP_NR_EOH
inline constexpr std::uint32_t kProtoNoReplyBody = 1u << 19;         // SMFIP_NR_BODY
inline constexpr std::uint32_t kProtoHeaderLeadingSpace = 1u << 20;  // SMFIP_HDR_LEADSPC

// Decoded commands, one struct per code. Strings hold the bytes between NULs as sent.
struct OptionNegotiation {  // 'O': three 32-bit big-endian words.
  std::uint32_t version = 0;
  std::uint32_t actions = 0;   // SMFIF_* the MTA allows.
  std::uint32_t protocol = 0;  // SMFIP_* the MTA offers.
};
struct Macros {  // 'D': the command they belong to, then name\0 value\0 pairs.
  char for_command = 0;
  std::vector<std::pair<std::string, std::string>> values;
};
struct Connect {  // 'C': hostname\0, family ('4', '6', 'L', 'U'); port and address unless 'U'.
  std::string hostname;
  char family = 'U';
  std::uint16_t port = 0;
  std::string address;
};
struct Helo {  // 'H': name\0
  std::string name;
};
struct Mail {  // 'M': sender\0 then ESMTP arguments\0 ...
  std::vector<std::string> args;
};
struct Rcpt {  // 'R': recipient\0 then ESMTP arguments\0 ...
  std::vector<std::string> args;
};
struct Data {};  // 'T'
struct Header {  // 'L': name\0 value\0
  std::string name;
  std::string value;
};
struct EndOfHeaders {};  // 'N'
struct Body {            // 'B': raw bytes (CRLF line ends), at most 65535 from Postfix.
  std::string chunk;
};
struct EndOfBody {  // 'E': may carry a last chunk of body (Sendmail does not; allowed).
  std::string chunk;
};
struct Abort {};              // 'A'
struct Quit {};               // 'Q'
struct QuitNewConnection {};  // 'K'
struct UnknownCommand {       // 'U': the SMTP command line\0
  std::string line;
};

using Command =
    std::variant<OptionNegotiation, Macros, Connect, Helo, Mail, Rcpt, Data, Header, EndOfHeaders,
                 Body, EndOfBody, Abort, Quit, QuitNewConnection, UnknownCommand>;

// Splits a byte stream into commands. Not thread-safe (one per connection).
//
// Errors (sticky: once Next has failed it fails again, and the connection must close):
// - kResourceExhausted: a packet length above max_packet_bytes (checked as soon as the four
//   length bytes arrive, before anything is buffered).
// - kInvalidArgument: a zero length, an unknown command code, data that does not fit the
//   command (a string without its NUL, short or extra bytes, a macro without its value).
// A packet cut short is not an error here: Next waits for more bytes. The connection decides
// when waiting is over (a timeout, or end of stream with HasPartialPacket()).
class PacketDecoder {
 public:
  // REQUIRES: max_packet_bytes >= 1. The length counts the command byte and the data.
  explicit PacketDecoder(std::size_t max_packet_bytes) : max_packet_bytes_(max_packet_bytes) {}

  // Appends bytes as they arrive.
  void Feed(std::string_view bytes);
  // The next complete command; nullopt when more bytes are needed.
  [[nodiscard]] std::expected<std::optional<Command>, Error> Next();
  // Whether bytes of an unfinished packet are buffered.
  [[nodiscard]] bool HasPartialPacket() const { return buffer_.size() > offset_; }
  // Drops buffered bytes and clears a sticky error (for a connection that starts over).
  void Reset();

 private:
  std::size_t max_packet_bytes_;
  std::string buffer_;
  std::size_t offset_ = 0;  // Start of the first unparsed byte in buffer_.
  std::optional<Error> error_;
};

// Decodes one packet's command code and data (no length prefix). Errors: as PacketDecoder.
[[nodiscard]] std::expected<Command, Error> DecodeCommand(char code, std::string_view data);

// A reply ready to send: its code and its encoded data.
struct Reply {
  char code = kReplyContinue;
  std::string data;
  friend bool operator==(const Reply&, const Reply&) = default;
};

// Replies. String arguments REQUIRE no NUL byte (they come from validated options or numbers).
[[nodiscard]] Reply ContinueReply();
[[nodiscard]] Reply AcceptReply();
[[nodiscard]] Reply RejectReply();
[[nodiscard]] Reply TempfailReply();
[[nodiscard]] Reply ProgressReply();
[[nodiscard]] Reply SkipReply();
// The OPTNEG answer: our version, the actions we will take, the protocol flags we want.
[[nodiscard]] Reply OptionNegotiationReply(std::uint32_t version, std::uint32_t actions,
                                           std::uint32_t protocol);
// An SMTP reply for the message, "550 5.7.1 text" (REQUIRES: it starts with 4xx or 5xx).
[[nodiscard]] Reply ReplyCodeReply(std::string_view smtp_reply);
[[nodiscard]] Reply AddHeaderReply(std::string_view name, std::string_view value);
// index counts from 0 (the top) for insert; from 1 for change. An empty value deletes.
[[nodiscard]] Reply InsertHeaderReply(std::uint32_t index, std::string_view name,
                                      std::string_view value);
[[nodiscard]] Reply ChangeHeaderReply(std::uint32_t index, std::string_view name,
                                      std::string_view value);
[[nodiscard]] Reply QuarantineReply(std::string_view reason);

// The bytes on the wire: 4-byte big-endian length, code, data.
[[nodiscard]] std::string Encode(const Reply& reply);
void AppendEncoded(const Reply& reply, std::string& out);

// A short name for logs and tests: "SMFIC_HEADER", "SMFIR_ADDHEADER".
[[nodiscard]] std::string_view CommandName(char code);
[[nodiscard]] std::string_view ReplyName(char code);

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_PROTOCOL_H_
