#include "server/spamd_core_adapter.h"

#include <boost/asio/post.hpp>
#include <exception>
#include <memory>
#include <utility>

#include "common/handler_guard.h"
#include "common/prometheus_text.h"
#include "server/verdict_of.h"

namespace nbspamd::server {

SpamdCoreAdapter::SpamdCoreAdapter(core::SpamFilter& filter, unsigned workers,
                                   FeedbackHook on_feedback, bool user_layers,
                                   AdmissionLimits limits)
    : filter_(filter),
      on_feedback_(std::move(on_feedback)),
      user_layers_(user_layers),
      admission_(limits),
      pool_(workers == 0 ? 1 : workers) {}

namespace {

// Answers `done` with the admission's refusal, at once.
template <class Result, class Done>
void Refuse(const Admission& admission, std::atomic<std::uint64_t>& exceptions, Done& done) {
  RunAndAnswer(
      "spamd admission", exceptions,
      [&]() -> std::expected<Result, Error> { return std::unexpected(admission.Refusal("spamd")); },
      done);
}

}  // namespace

std::optional<std::string> SpamdCoreAdapter::UserOf(const spamd::RequestContext& context) const {
  if (!user_layers_ || context.user.empty()) return std::nullopt;
  return context.user;
}

SpamdCoreAdapter::~SpamdCoreAdapter() { Stop(); }

void SpamdCoreAdapter::ClassifyAsync(std::string_view message, const spamd::RequestContext& context,
                                     spamd::ClassifyDone done) {
  std::optional<Admission::Ticket> ticket = admission_.TryAdmit(message.size());
  if (!ticket) return Refuse<spamd::SpamdVerdict>(admission_, exceptions_, done);
  // spamd's User header is the mailbox spamc delivers for: the recipient the history keeps.
  boost::asio::post(pool_, [this, message = std::string(message), user = UserOf(context),
                            recipient = context.user, done = std::move(done),
                            ticket = std::move(*ticket)]() mutable {
    RunAndAnswer(
        "spamd classification", exceptions_,
        [&]() -> std::expected<spamd::SpamdVerdict, Error> {
          auto outcome = filter_.Classify(
              {.message = message,
               .user = user ? std::optional<std::string_view>(*user) : std::nullopt,
               .front_end = "spamd",
               .recipients = recipient});
          if (!outcome) return std::unexpected(outcome.error());
          return spamd::SpamdVerdict{.score = outcome->result.score,
                                     .verdict = FrontEndVerdictOf(outcome->result.verdict),
                                     .spam_confidence = outcome->spam_confidence,
                                     .spam_threshold = outcome->thresholds.spam,
                                     .scan_id = std::move(outcome->scan_id),
                                     .scan_signature = std::move(outcome->scan_signature)};
        },
        done);
  });
}

void SpamdCoreAdapter::LearnAsync(std::string_view message, spamd::SpamdLabel label,
                                  const spamd::RequestContext& context, spamd::TellDone done) {
  std::optional<Admission::Ticket> ticket = admission_.TryAdmit(message.size());
  if (!ticket) return Refuse<spamd::SpamdTellOutcome>(admission_, exceptions_, done);
  boost::asio::post(pool_, [this, message = std::string(message), label, source = context.source,
                            user = UserOf(context), done = std::move(done),
                            ticket = std::move(*ticket)]() mutable {
    // Answered once: by the core's completion, or here when the core throws before taking it.
    auto answer =
        std::make_shared<AnswerOnce<spamd::TellDone>>("spamd tell", exceptions_, std::move(done));
    RunAndAnswer(
        "spamd tell", exceptions_,
        [&]() -> std::expected<void, Error> {
          filter_.TrainAsync(
              {.message = message,
               .label = label == spamd::SpamdLabel::kSpam ? "spam" : "ham",
               .source = source,
               .user = user ? std::optional<std::string_view>(*user) : std::nullopt,
               .front_end = "spamd"},
              [this, answer](std::expected<core::TrainOutcome, Error> trained) {
                if (!trained) {
                  (*answer)(std::unexpected(trained.error()));
                  return;
                }
                if (trained->feedback && on_feedback_) {
                  // The hook is the metrics' and the log's: its failure must not
                  // cost the answer.
                  try {
                    on_feedback_(*trained->feedback);
                  } catch (...) {
                    NoteHandlerException("spamd feedback hook", "", exceptions_);
                  }
                }
                // Queued in cluster mode: applied later, so taken as a change.
                // Only checked (error-driven training): nothing was counted.
                (*answer)(spamd::SpamdTellOutcome{
                    .changed = trained->queued || trained->status == model::LearnStatus::kLearned ||
                               trained->status == model::LearnStatus::kRelearned});
              });
          return {};
        },
        [&](std::expected<void, Error> taken) {
          if (!taken) (*answer)(std::unexpected(std::move(taken.error())));
        });
  });
}

void SpamdCoreAdapter::ForgetAsync(std::string_view message, const spamd::RequestContext& context,
                                   spamd::TellDone done) {
  std::optional<Admission::Ticket> ticket = admission_.TryAdmit(message.size());
  if (!ticket) return Refuse<spamd::SpamdTellOutcome>(admission_, exceptions_, done);
  boost::asio::post(pool_, [this, message = std::string(message), user = UserOf(context),
                            source = context.source, done = std::move(done),
                            ticket = std::move(*ticket)]() mutable {
    auto answer =
        std::make_shared<AnswerOnce<spamd::TellDone>>("spamd tell", exceptions_, std::move(done));
    RunAndAnswer(
        "spamd tell", exceptions_,
        [&]() -> std::expected<void, Error> {
          filter_.ForgetAsync({.message = message,
                               .source = source,
                               .user = user ? std::optional<std::string_view>(*user) : std::nullopt,
                               .front_end = "spamd"},
                              [answer](std::expected<core::ForgetOutcome, Error> gone) {
                                if (!gone) {
                                  (*answer)(std::unexpected(gone.error()));
                                  return;
                                }
                                (*answer)(spamd::SpamdTellOutcome{.changed = true});
                              });
          return {};
        },
        [&](std::expected<void, Error> taken) {
          if (!taken) (*answer)(std::unexpected(std::move(taken.error())));
        });
  });
}

void SpamdCoreAdapter::Stop() { pool_.join(); }

std::string RenderSpamdMetrics(const spamd::SpamdCounters& c, std::uint64_t adapter_exceptions) {
  std::string out;
  AppendCounter(out, "nbspamd_spamd_connections_total", "spamd-protocol connections accepted.", "",
                c.connections);
  AppendCounter(out, "nbspamd_spamd_requests_answered_total",
                "spamd requests answered EX_OK (PING included).", "", c.answered);
  AppendCounter(out, "nbspamd_spamd_errors_total",
                "spamd requests answered with an error code (EX_PROTOCOL and the rest).", "",
                c.errors);
  AppendCounter(out, "nbspamd_spamd_tells_refused_total",
                "TELL requests refused EX_NOPERM by the spamd_tell policy.", "", c.tells_refused);
  AppendCounter(out, "nbspamd_spamd_timeouts_total",
                "spamd requests not read within spamd_read_timeout_seconds.", "", c.timeouts);
  AppendCounter(out, "nbspamd_spamd_verdict_timeouts_total",
                "spamd requests answered EX_TEMPFAIL after spamd_verdict_timeout_seconds without "
                "the core's answer.",
                "", c.verdict_timeouts);
  const std::uint64_t internal_errors = c.handler_exceptions.load() + adapter_exceptions;
  AppendCounter(out, "nbspamd_spamd_internal_errors_total",
                "Internal errors (a bug): spamd connections closed for one, and exceptions in the "
                "work for a request (answered as errors).",
                "", internal_errors);
  return out;
}

}  // namespace nbspamd::server
