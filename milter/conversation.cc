#include "milter/conversation.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace nbspamd::milter {

namespace {

// Events we do not need (HELO, DATA and unknown SMTP commands; the connection only for the
// client's address, never answered) and events we never answer but with SMFIR_CONTINUE, so the MTA
// need not wait for the answer. Asked only as far as the MTA offers them.
constexpr std::uint32_t kWantedProtocol =
    kProtoNoHelo | kProtoNoData | kProtoNoUnknown | kProtoNoReplyConnect | kProtoNoReplyHelo |
    kProtoNoReplyMail | kProtoNoReplyRcpt | kProtoNoReplyData | kProtoNoReplyUnknown |
    kProtoNoReplyHeader | kProtoNoReplyEoh | kProtoNoReplyBody;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    return lower(x) == lower(y);
  });
}

// nbspamd's own header names besides the flag and status headers, whatever they are set to:
// any name that starts with X-Nbspamd, and spamd's scan header. A sender's copies go.
bool IsOwnHeaderName(std::string_view name) {
  constexpr std::string_view kOwnPrefix = "x-nbspamd";
  return (name.size() >= kOwnPrefix.size() &&
          EqualsIgnoreCase(name.substr(0, kOwnPrefix.size()), kOwnPrefix)) ||
         EqualsIgnoreCase(name, "X-Spam-Scan-Id");
}

// "<a@b>" → "a@b"; "<>" → "".
std::string StripAngleBrackets(std::string_view address) {
  if (address.size() >= 2 && address.front() == '<' && address.back() == '>') {
    address = address.substr(1, address.size() - 2);
  }
  return std::string(address);
}

std::string_view Trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// The line breaks of a folded field as CRLF: Sendmail and Postfix send them as bare LF.
void AppendWithCrlf(std::string_view text, std::string& out) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) out.push_back('\r');
    out.push_back(text[i]);
  }
}

std::string FormatNumber(std::optional<double> value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", *value);
  return text;
}

}  // namespace

Conversation::Step Conversation::ProtocolError(std::string message) {
  Step step;
  step.close = true;
  step.error = Error{ErrorCode::kInvalidArgument, std::move(message)};
  return step;
}

Conversation::Step Conversation::ContinueUnless(std::uint32_t no_reply_flag) const {
  Step step;
  if ((protocol_ & no_reply_flag) == 0) step.replies.push_back(ContinueReply());
  return step;
}

Conversation::Step Conversation::Negotiate(const OptionNegotiation& offer) {
  if (offer.version < kMinProtocolVersion) {
    return ProtocolError("milter protocol version " + std::to_string(offer.version) +
                         " is older than 2");
  }
  std::uint32_t wanted_actions = kActionAddHeaders;
  if (options_.remove_incoming_headers) wanted_actions |= kActionChangeHeaders;
  if (options_.quarantine_score) wanted_actions |= kActionQuarantine;
  actions_ = wanted_actions & offer.actions;
  protocol_ = kWantedProtocol & offer.protocol;
  negotiated_ = true;
  Step step;
  step.replies.push_back(
      OptionNegotiationReply(std::min(offer.version, kProtocolVersion), actions_, protocol_));
  return step;
}

void Conversation::StartMessage() {
  ResetMessage();
  in_message_ = true;
}

void Conversation::ResetMessage() {
  in_message_ = false;
  awaiting_verdict_ = false;
  headers_ended_ = false;
  oversized_ = false;
  message_.clear();
  context_ = MessageContext{};
  incoming_flag_headers_ = 0;
  incoming_status_headers_ = 0;
  incoming_own_headers_.clear();
}

void Conversation::AppendToMessage(std::string_view bytes) {
  if (oversized_) return;
  if (message_.size() + bytes.size() > options_.max_body_bytes) {
    oversized_ = true;
    std::string().swap(message_);  // Give the memory back now, not at the end of the message.
    return;
  }
  message_.append(bytes);
}

Conversation::Step Conversation::Handle(Command command) {
  if (!negotiated_ && !std::holds_alternative<OptionNegotiation>(command)) {
    return ProtocolError("milter command before option negotiation");
  }
  return std::visit(
      [this](auto& c) -> Step {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, OptionNegotiation>) {
          if (negotiated_) return ProtocolError("a second SMFIC_OPTNEG on one connection");
          return Negotiate(c);
        } else if constexpr (std::is_same_v<T, Macros>) {
          for (const auto& [name, value] : c.values) {
            if (name == "{auth_authen}") user_ = value;
            if (name == "i" || name == "{i}") queue_id_ = value;
          }
          return Step{};  // Macros are never answered.
        } else if constexpr (std::is_same_v<T, Connect>) {
          client_ = c.family == 'U' || c.address.empty() ? c.hostname : c.address;
          return ContinueUnless(kProtoNoReplyConnect);
        } else if constexpr (std::is_same_v<T, Helo>) {
          return ContinueUnless(kProtoNoReplyHelo);
        } else if constexpr (std::is_same_v<T, Data>) {
          return ContinueUnless(kProtoNoReplyData);
        } else if constexpr (std::is_same_v<T, UnknownCommand>) {
          return ContinueUnless(kProtoNoReplyUnknown);
        } else if constexpr (std::is_same_v<T, Mail>) {
          StartMessage();
          context_.sender = StripAngleBrackets(c.args[0]);
          return ContinueUnless(kProtoNoReplyMail);
        } else if constexpr (std::is_same_v<T, Rcpt>) {
          if (!in_message_) return ProtocolError("SMFIC_RCPT outside a message");
          context_.recipients.push_back(StripAngleBrackets(c.args[0]));
          return ContinueUnless(kProtoNoReplyRcpt);
        } else if constexpr (std::is_same_v<T, Header>) {
          if (!in_message_ || headers_ended_) {
            return ProtocolError("SMFIC_HEADER outside a message's header");
          }
          if (EqualsIgnoreCase(c.name, "Message-ID") && context_.message_id.empty()) {
            context_.message_id = std::string(Trim(c.value));
          }
          if (EqualsIgnoreCase(c.name, options_.flag_header)) ++incoming_flag_headers_;
          if (EqualsIgnoreCase(c.name, options_.status_header)) {
            ++incoming_status_headers_;
          } else if (!EqualsIgnoreCase(c.name, options_.flag_header) && IsOwnHeaderName(c.name)) {
            const auto same = std::ranges::find_if(incoming_own_headers_, [&](const auto& seen) {
              return EqualsIgnoreCase(seen.first, c.name);
            });
            if (same != incoming_own_headers_.end()) {
              ++same->second;
            } else {
              incoming_own_headers_.emplace_back(c.name, 1);
            }
          }
          std::string line = c.name;
          line += ": ";
          AppendWithCrlf(c.value, line);
          line += "\r\n";
          AppendToMessage(line);
          return ContinueUnless(kProtoNoReplyHeader);
        } else if constexpr (std::is_same_v<T, EndOfHeaders>) {
          if (!in_message_ || headers_ended_) {
            return ProtocolError("SMFIC_EOH outside a message's header");
          }
          headers_ended_ = true;
          AppendToMessage("\r\n");
          return ContinueUnless(kProtoNoReplyEoh);
        } else if constexpr (std::is_same_v<T, Body>) {
          if (!in_message_ || !headers_ended_) {
            return ProtocolError("SMFIC_BODY outside a message's body");
          }
          AppendToMessage(c.chunk);
          return ContinueUnless(kProtoNoReplyBody);
        } else if constexpr (std::is_same_v<T, EndOfBody>) {
          if (!in_message_ || !headers_ended_) {
            return ProtocolError("SMFIC_BODYEOB outside a message's body");
          }
          AppendToMessage(c.chunk);
          MilterCounters::Add(counters_.messages);
          Step step;
          if (oversized_) {
            MilterCounters::Add(counters_.oversized);
            ResetMessage();
            step.replies.push_back(ContinueReply());
            return step;
          }
          awaiting_verdict_ = true;
          context_.user = user_;
          context_.queue_id = queue_id_;
          context_.client = client_;
          step.classify = ClassifyRequest{std::move(message_), std::move(context_)};
          return step;
        } else if constexpr (std::is_same_v<T, Abort>) {
          ResetMessage();
          queue_id_.clear();
          return Step{};  // Never answered.
        } else if constexpr (std::is_same_v<T, Quit>) {
          Step step;
          step.close = true;
          return step;
        } else {
          static_assert(std::is_same_v<T, QuitNewConnection>);
          // The MTA reuses the connection for a new SMTP session: a new OPTNEG follows.
          ResetMessage();
          negotiated_ = false;
          protocol_ = 0;
          actions_ = 0;
          user_.clear();
          queue_id_.clear();
          return Step{};
        }
      },
      command);
}

void Conversation::EditHeader(const std::string& name, std::uint32_t incoming,
                              const std::optional<std::string>& value,
                              std::vector<Reply>& replies) const {
  const bool can_change = (actions_ & kActionChangeHeaders) != 0;
  if (can_change && options_.remove_incoming_headers) {
    // From the last copy to the first, so that deleting one does not move the others' indices.
    const std::uint32_t keep = value ? 1 : 0;
    for (std::uint32_t index = incoming; index > keep; --index) {
      replies.push_back(ChangeHeaderReply(index, name, ""));
    }
    if (value && incoming > 0) {
      replies.push_back(ChangeHeaderReply(1, name, *value));
      return;
    }
  }
  if (value && (actions_ & kActionAddHeaders) != 0) {
    replies.push_back(AddHeaderReply(name, *value));
  }
}

std::string Conversation::StatusValue(const MilterVerdict& verdict) const {
  std::string value(FrontEndVerdictName(verdict.verdict));
  value += ' ';
  value += FormatNumber(verdict.spam_confidence);
  value += " score=";
  value += FormatNumber(verdict.score);
  if (!verdict.scan_id.empty()) value += " scan=" + verdict.scan_id;
  if (!verdict.scan_id.empty() && !verdict.scan_signature.empty()) {
    value += " sig=" + verdict.scan_signature;
  }
  return value;
}

std::vector<Reply> Conversation::Finish(std::expected<MilterVerdict, Error> verdict) {
  std::vector<Reply> replies;
  const std::uint32_t incoming_flags = incoming_flag_headers_;
  const std::uint32_t incoming_statuses = incoming_status_headers_;
  const std::vector<std::pair<std::string, std::uint32_t>> incoming_own =
      std::move(incoming_own_headers_);
  ResetMessage();
  queue_id_.clear();
  if (!verdict) {
    MilterCounters::Add(counters_.backend_errors);
    if (options_.fail_mode == FailMode::kTempfail) {
      MilterCounters::Add(counters_.tempfailed);
      replies.push_back(TempfailReply());
    } else {
      replies.push_back(ContinueReply());
    }
    return replies;
  }
  const bool spam = verdict->verdict == MilterVerdict::Kind::kSpam;
  switch (verdict->verdict) {
    case MilterVerdict::Kind::kSpam:
      MilterCounters::Add(counters_.spam);
      break;
    case MilterVerdict::Kind::kUnsure:
      MilterCounters::Add(counters_.unsure);
      break;
    case MilterVerdict::Kind::kHam:
      MilterCounters::Add(counters_.ham);
      break;
  }
  const auto scores_at_least = [&](const std::optional<double>& threshold) {
    return spam && threshold && verdict->score && *verdict->score >= *threshold;
  };
  if (scores_at_least(options_.reject_score)) {
    MilterCounters::Add(counters_.rejected);
    replies.push_back(ReplyCodeReply("550 5.7.1 " + options_.reject_text));
    return replies;
  }
  EditHeader(options_.flag_header, incoming_flags,
             spam ? std::optional<std::string>("YES") : std::nullopt, replies);
  EditHeader(options_.status_header, incoming_statuses, StatusValue(*verdict), replies);
  // nbspamd's other header names, as a sender wrote them: none reaches the mailbox.
  for (const auto& [name, copies] : incoming_own) EditHeader(name, copies, std::nullopt, replies);
  if (scores_at_least(options_.quarantine_score) && (actions_ & kActionQuarantine) != 0) {
    MilterCounters::Add(counters_.quarantined);
    replies.push_back(QuarantineReply(options_.quarantine_reason));
  }
  replies.push_back(ContinueReply());
  return replies;
}

}  // namespace nbspamd::milter
