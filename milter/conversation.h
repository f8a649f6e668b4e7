// Conversation: one milter connection's state machine, without I/O. The connection decodes
// commands, hands each to Handle, writes the replies it returns, and when a step asks for a
// classification, calls the backend and gives its answer to Finish.
//
//   Conversation conversation(options, counters);
//   Conversation::Step step = conversation.Handle(std::move(command));
//   Write(step.replies);
//   if (step.classify) backend.ClassifyAsync(std::move(step.classify->message),
//                                            std::move(step.classify->context),
//                                            [&](auto verdict) {
//                                            Write(conversation.Finish(verdict));
//                                            });
//   if (step.close) Close();
//
// Conversation (milter protocol version 6):
// - OPTNEG first (anything else first, or a second OPTNEG, is a protocol error). We answer with our
// version (6, or the
//   MTA's if lower; below 2 is an error), the actions ADDHDRS, CHGHDRS (to delete forged copies of
//   our headers) and QUARANTINE (when configured), each only if the MTA offers it, and ask not to
//   be sent CONNECT, HELO, DATA and unknown SMTP commands and not to reply to the events we only
//   continue (SMFIP_NR_*), as far as the MTA offers those flags.
// - MACRO: {auth_authen} is the user identity (kept for the connection), {i} the queue id.
// - MAIL starts a message: sender, then RCPT recipients, HEADER fields (rebuilt as
//   "Name: value\r\n", the line breaks of folded fields as CRLF; Message-ID noted), EOH (a blank
//   line), BODY chunks. RCPT, HEADER, EOH, BODY or BODYEOB outside a message, a HEADER or EOH
//   after EOH, and BODY or BODYEOB before it are protocol errors; MAIL inside a message starts
//   a new one.
// - BODYEOB: the message goes to the backend, unless it grew past max_body_bytes (then it is
//   accepted unchecked and counted). The replies: SMFIR_REPLYCODE "550 5.7.1 <text>" alone for
//   spam scoring at least reject_score; else the header edits, SMFIR_QUARANTINE for spam scoring
//   at least quarantine_score, and SMFIR_CONTINUE. The header edits: "X-Nbspamd: <verdict>
//   <confidence|-> score=<score|->" on every message, "X-Spam-Flag: YES" on spam; a copy of either
//   that came with the message is replaced (SMFIR_CHGHEADER, first copy) and further copies
//   deleted, so a sender cannot forge them; on ham and unsure an incoming X-Spam-Flag is deleted.
//   A backend error gives SMFIR_CONTINUE or SMFIR_TEMPFAIL per fail_mode.
// - ABORT forgets the message and keeps the connection; any number of messages may follow.
// - QUIT closes; QUIT_NC starts over (a new OPTNEG follows on the same connection).
//
// Not thread-safe: one per connection, used on its strand. Options and counters must outlive it.
#ifndef NBSPAMD_MILTER_CONVERSATION_H_
#define NBSPAMD_MILTER_CONVERSATION_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "milter/backend.h"
#include "milter/counters.h"
#include "milter/options.h"
#include "milter/protocol.h"

namespace nbspamd::milter {

// A message ready for the backend.
struct ClassifyRequest {
  std::string message;
  MessageContext context;
};

class Conversation {
 public:
  // What one command leads to.
  struct Step {
    std::vector<Reply> replies;               // To write, in order.
    std::optional<ClassifyRequest> classify;  // Classify, then give the answer to Finish.
    bool close = false;                       // Close the connection after the replies.
    std::optional<Error> error;               // Why it closes, for a protocol error.
  };

  // REQUIRES: ValidateConversationOptions(options) succeeded.
  Conversation(const ConversationOptions& options, MilterCounters& counters)
      : options_(options), counters_(counters) {}

  // Handles one decoded command. REQUIRES: !AwaitingVerdict() (the MTA sends nothing while it
  // waits for the end-of-body reply; the connection holds later bytes until Finish).
  [[nodiscard]] Step Handle(Command command);
  // The replies to end-of-body for the backend's answer; the message is then forgotten.
  // REQUIRES: AwaitingVerdict().
  [[nodiscard]] std::vector<Reply> Finish(std::expected<MilterVerdict, Error> verdict);

  [[nodiscard]] bool AwaitingVerdict() const { return awaiting_verdict_; }
  // Whether a message has begun (MAIL, or headers) and not yet ended: a connection that is asked
  // to shut down closes at once otherwise.
  [[nodiscard]] bool InMessage() const { return in_message_; }
  // The flags and actions agreed in OPTNEG (0 before).
  [[nodiscard]] std::uint32_t protocol() const { return protocol_; }
  [[nodiscard]] std::uint32_t actions() const { return actions_; }

 private:
  Step Negotiate(const OptionNegotiation& offer);
  // SMFIR_CONTINUE unless the flag says the MTA expects no reply to this event.
  [[nodiscard]] Step ContinueUnless(std::uint32_t no_reply_flag) const;
  [[nodiscard]] static Step ProtocolError(std::string message);
  void AppendToMessage(std::string_view bytes);
  void StartMessage();
  void ResetMessage();
  // The edits that put `name: value` in place of the copies that came with the message (just
  // deleting them when value is nullopt).
  void EditHeader(const std::string& name, std::uint32_t incoming,
                  const std::optional<std::string>& value, std::vector<Reply>& replies) const;
  [[nodiscard]] std::string StatusValue(const MilterVerdict& verdict) const;

  const ConversationOptions& options_;
  MilterCounters& counters_;
  bool negotiated_ = false;
  std::uint32_t protocol_ = 0;
  std::uint32_t actions_ = 0;
  std::string user_;      // {auth_authen}: per connection.
  std::string queue_id_;  // {i}: sent with MAIL's macros (Postfix) or later; per message.
  std::string client_;    // The SMTP client's address from SMFIC_CONNECT; per connection.

  // The message in progress.
  bool in_message_ = false;
  bool awaiting_verdict_ = false;
  bool headers_ended_ = false;
  bool oversized_ = false;
  std::string message_;
  MessageContext context_;
  std::uint32_t incoming_flag_headers_ = 0;    // Copies of flag_header that came with it.
  std::uint32_t incoming_status_headers_ = 0;  // Copies of status_header.
  // Other headers of nbspamd's own names that came with it (IsOwnHeaderName), by name as first
  // spelt, with their copies.
  std::vector<std::pair<std::string, std::uint32_t>> incoming_own_headers_;
};

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_CONVERSATION_H_
