#include "server/milter_core_adapter.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

#include "common/handler_guard.h"
#include "common/prometheus_text.h"
#include "model/user_layer.h"
#include "server/verdict_of.h"

namespace nbspamd::server {

std::optional<std::string> MilterUserOf(const milter::MessageContext& context) {
  if (context.recipients.size() != 1) return std::nullopt;
  std::string user = context.recipients.front();
  for (char& c : user) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!model::CheckUserId(user)) return std::nullopt;
  return user;
}

MilterCoreAdapter::MilterCoreAdapter(core::SpamFilter& filter, unsigned workers, bool user_layers,
                                     AdmissionLimits limits)
    : filter_(filter),
      user_layers_(user_layers),
      admission_(limits),
      pool_(workers == 0 ? 1 : workers) {}

MilterCoreAdapter::~MilterCoreAdapter() { Stop(); }

void MilterCoreAdapter::ClassifyAsync(std::string message, milter::MessageContext context,
                                      milter::ClassifyDone done) {
  std::optional<Admission::Ticket> ticket = admission_.TryAdmit(message.size());
  if (!ticket) {  // Over the limits: answered at once, and the connection's fail mode applies.
    return RunAndAnswer(
        "milter classification", exceptions_,
        [&]() -> std::expected<milter::MilterVerdict, Error> {
          return std::unexpected(admission_.Refusal("milter"));
        },
        done);
  }
  boost::asio::post(pool_, [this, message = std::move(message), context = std::move(context),
                            done = std::move(done), ticket = std::move(*ticket)]() mutable {
    RunAndAnswer(
        "milter classification", exceptions_,
        [&]() -> std::expected<milter::MilterVerdict, Error> {
          std::optional<std::string_view> id;
          if (!context.message_id.empty() && core::SpamFilter::ValidateId(context.message_id)) {
            id = context.message_id;
          }
          const std::optional<std::string> user =
              user_layers_ ? MilterUserOf(context) : std::nullopt;
          std::string recipients;
          for (const std::string& recipient : context.recipients) {
            if (!recipients.empty()) recipients += ',';
            recipients += recipient;
          }
          auto outcome = filter_.Classify(
              {.message = message,
               .id = id,
               .user = user ? std::optional<std::string_view>(*user) : std::nullopt,
               .front_end = "milter",
               .client = context.client,
               .recipients = recipients});
          if (!outcome) return std::unexpected(outcome.error());
          return milter::MilterVerdict{.score = outcome->result.score,
                                       .verdict = FrontEndVerdictOf(outcome->result.verdict),
                                       .spam_confidence = outcome->spam_confidence,
                                       .scan_id = std::move(outcome->scan_id),
                                       .scan_signature = std::move(outcome->scan_signature)};
        },
        done);
  });
}

void MilterCoreAdapter::Stop() { pool_.join(); }

std::string RenderMilterMetrics(const milter::MilterCounters& c, std::uint64_t adapter_exceptions) {
  std::string out;
  AppendCounter(out, "nbspamd_milter_connections_total", "MTA connections accepted.", "",
                c.connections);
  AppendCounter(out, "nbspamd_milter_messages_total",
                "Messages that reached end of body, by what the milter did.", "verdict=\"spam\"",
                c.spam);
  AppendCounter(out, "nbspamd_milter_messages_total", "", "verdict=\"unsure\"", c.unsure);
  AppendCounter(out, "nbspamd_milter_messages_total", "", "verdict=\"ham\"", c.ham);
  AppendCounter(out, "nbspamd_milter_messages_total", "", "verdict=\"oversized\"", c.oversized);
  AppendCounter(out, "nbspamd_milter_messages_total", "", "verdict=\"unclassified\"",
                c.backend_errors);
  AppendCounter(out, "nbspamd_milter_actions_total",
                "Spam rejected at SMTP time or quarantined, and messages tempfailed.",
                "action=\"reject\"", c.rejected);
  AppendCounter(out, "nbspamd_milter_actions_total", "", "action=\"quarantine\"", c.quarantined);
  AppendCounter(out, "nbspamd_milter_actions_total", "", "action=\"tempfail\"", c.tempfailed);
  AppendCounter(out, "nbspamd_milter_oversized_total",
                "Messages larger than max_body_bytes, accepted unchecked.", "", c.oversized);
  AppendCounter(out, "nbspamd_milter_fail_mode_total",
                "Messages the model could not answer for, handled by milter_fail_mode.", "",
                c.backend_errors);
  AppendCounter(out, "nbspamd_milter_protocol_errors_total",
                "Connections closed for a protocol error.", "", c.protocol_errors);
  AppendCounter(out, "nbspamd_milter_timeouts_total",
                "Connections closed after milter_read_timeout_seconds.", "", c.timeouts);
  AppendCounter(out, "nbspamd_milter_verdict_timeouts_total",
                "Messages answered by milter_fail_mode after milter_verdict_timeout_seconds "
                "without a verdict.",
                "", c.verdict_timeouts);
  const std::uint64_t internal_errors = c.internal_errors.load() + adapter_exceptions;
  AppendCounter(out, "nbspamd_milter_internal_errors_total",
                "Internal errors (a bug): connections closed for one, and exceptions in the work "
                "for a message (answered as errors).",
                "", internal_errors);
  return out;
}

}  // namespace nbspamd::server
