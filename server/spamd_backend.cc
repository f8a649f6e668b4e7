#include "server/spamd_backend.h"

#include <boost/asio/post.hpp>
#include <exception>
#include <memory>
#include <utility>

#include "server/front_end_thread.h"

namespace nbspamd::server {
namespace {

spamd::SpamdVerdictKind KindOf(model::Verdict verdict) {
  switch (verdict) {
    case model::Verdict::kHam:
      return spamd::SpamdVerdictKind::kHam;
    case model::Verdict::kSpam:
      return spamd::SpamdVerdictKind::kSpam;
    case model::Verdict::kUnsure:
      break;
  }
  return spamd::SpamdVerdictKind::kUnsure;
}

}  // namespace

SpamFilterSpamdBackend::SpamFilterSpamdBackend(core::SpamFilter& filter, unsigned workers,
                                               FeedbackHook on_feedback, bool user_layers)
    : filter_(filter),
      on_feedback_(std::move(on_feedback)),
      user_layers_(user_layers),
      pool_(workers == 0 ? 1 : workers) {}

std::optional<std::string> SpamFilterSpamdBackend::UserOf(
    const spamd::RequestContext& context) const {
  if (!user_layers_ || context.user.empty()) return std::nullopt;
  return context.user;
}

SpamFilterSpamdBackend::~SpamFilterSpamdBackend() { Stop(); }

void SpamFilterSpamdBackend::ClassifyAsync(std::string_view message,
                                           const spamd::RequestContext& context,
                                           spamd::ClassifyDone done) {
  boost::asio::post(pool_, [this, message = std::string(message), user = UserOf(context),
                            done = std::move(done)]() mutable {
    std::expected<spamd::SpamdVerdict, Error> answer =
        std::unexpected(Error{ErrorCode::kInternal, "classification failed"});
    try {
      auto outcome = filter_.Classify(message, /*explain=*/0, /*id=*/std::nullopt,
                                      user ? std::optional<std::string_view>(*user) : std::nullopt);
      if (outcome) {
        answer = spamd::SpamdVerdict{.score = outcome->result.score,
                                     .verdict = KindOf(outcome->result.verdict),
                                     .spam_confidence = outcome->spam_confidence,
                                     .spam_threshold = filter_.options().spam_threshold};
      } else {
        answer = std::unexpected(outcome.error());
      }
    } catch (const std::exception& e) {
      answer = std::unexpected(Error{ErrorCode::kInternal, e.what()});
    }
    done(std::move(answer));
  });
}

void SpamFilterSpamdBackend::LearnAsync(std::string_view message, spamd::SpamdLabel label,
                                        const spamd::RequestContext& context,
                                        spamd::TellDone done) {
  boost::asio::post(pool_, [this, message = std::string(message), label, source = context.source,
                            user = UserOf(context), done = std::move(done)]() mutable {
    // `done` moves into the core's completion; kept shared so that an exception thrown before
    // the core took it can still answer.
    auto shared = std::make_shared<spamd::TellDone>(std::move(done));
    try {
      filter_.TrainAsync(
          message, label == spamd::SpamdLabel::kSpam ? "spam" : "ham",
          /*id=*/std::nullopt, source, user ? std::optional<std::string_view>(*user) : std::nullopt,
          [this, shared](std::expected<core::TrainOutcome, Error> trained) {
            if (!trained) {
              (*shared)(std::unexpected(trained.error()));
              return;
            }
            if (trained->feedback && on_feedback_) on_feedback_(*trained->feedback);
            // Queued in cluster mode: applied later, so taken as a change.
            (*shared)(spamd::SpamdTellOutcome{
                .changed = trained->queued || trained->status != model::LearnStatus::kUnchanged});
          });
    } catch (const std::exception& e) {
      if (*shared) (*shared)(std::unexpected(Error{ErrorCode::kInternal, e.what()}));
    }
  });
}

void SpamFilterSpamdBackend::ForgetAsync(std::string_view message,
                                         const spamd::RequestContext& context,
                                         spamd::TellDone done) {
  boost::asio::post(pool_, [this, message = std::string(message), user = UserOf(context),
                            source = context.source, done = std::move(done)]() mutable {
    auto shared = std::make_shared<spamd::TellDone>(std::move(done));
    try {
      filter_.ForgetMessageAsync(message,
                                 user ? std::optional<std::string_view>(*user) : std::nullopt,
                                 source, [shared](std::expected<core::ForgetOutcome, Error> gone) {
                                   if (!gone) {
                                     (*shared)(std::unexpected(gone.error()));
                                     return;
                                   }
                                   (*shared)(spamd::SpamdTellOutcome{.changed = true});
                                 });
    } catch (const std::exception& e) {
      if (*shared) (*shared)(std::unexpected(Error{ErrorCode::kInternal, e.what()}));
    }
  });
}

void SpamFilterSpamdBackend::Stop() { pool_.join(); }

std::string RenderSpamdMetrics(const spamd::SpamdCounters& c) {
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
  AppendCounter(out, "nbspamd_spamd_internal_errors_total",
                "spamd connections closed for an internal error (a bug).", "",
                c.handler_exceptions);
  return out;
}

}  // namespace nbspamd::server
