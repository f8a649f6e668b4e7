#include "server/milter_front_end.h"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "common/log.h"
#include "milter/address.h"
#include "milter/options.h"
#include "server/incident_log.h"

namespace nbspamd::server {
namespace {

// The milter front end's settings as its options, checked by the milter's own validators. Errors:
// kInvalidArgument naming the key.
std::expected<milter::ConnectionContext, Error> MilterContext(const config::Settings& settings) {
  const auto invalid = [](std::string_view key, const Error& error) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid value for '" + std::string(key) + "': " + error.message);
  };
  milter::ConnectionContext context;
  auto fail_mode = milter::ParseFailMode(settings.milter_fail_mode);
  if (!fail_mode) return invalid("milter_fail_mode", fail_mode.error());
  context.conversation.fail_mode = *fail_mode;
  context.conversation.max_body_bytes = settings.max_body_bytes;
  context.conversation.reject_score = settings.milter_reject_score;
  context.conversation.reject_text = settings.milter_reject_text;
  context.conversation.quarantine_score = settings.milter_quarantine_score;
  context.conversation.flag_header = settings.milter_flag_header;
  context.conversation.status_header = settings.milter_status_header;
  context.connection.read_timeout = std::chrono::seconds(settings.milter_read_timeout_seconds);
  context.connection.verdict_timeout =
      std::chrono::seconds(settings.milter_verdict_timeout_seconds);
  // Each setting on its own, so that the error names the key that is wrong.
  const struct {
    std::string_view key;
    milter::ConversationOptions options;
  } checks[] = {
      {"milter_reject_text",
       [&] {
         milter::ConversationOptions o;
         o.reject_text = context.conversation.reject_text;
         return o;
       }()},
      {"milter_flag_header",
       [&] {
         milter::ConversationOptions o;
         o.flag_header = context.conversation.flag_header;
         return o;
       }()},
      {"milter_status_header",
       [&] {
         milter::ConversationOptions o;
         o.status_header = context.conversation.status_header;
         return o;
       }()},
      {"milter_reject_score",
       [&] {
         milter::ConversationOptions o;
         o.reject_score = context.conversation.reject_score;
         return o;
       }()},
      {"milter_quarantine_score",
       [&] {
         milter::ConversationOptions o;
         o.quarantine_score = context.conversation.quarantine_score;
         return o;
       }()},
  };
  for (const auto& check : checks) {
    if (auto valid = milter::ValidateConversationOptions(check.options); !valid) {
      return invalid(check.key, valid.error());
    }
  }
  if (auto valid = milter::ValidateConversationOptions(context.conversation); !valid) {
    return invalid("max_body_bytes", valid.error());
  }
  if (auto valid = milter::ValidateConnectionOptions(context.connection); !valid) {
    return invalid("milter_read_timeout_seconds", valid.error());
  }
  return context;
}

}  // namespace

std::expected<void, Error> MilterFrontEnd::Start(const config::Settings& settings,
                                                 core::SpamFilter& filter) {
  auto address = milter::ParseMilterAddress(settings.milter_listen);
  if (!address) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid value for 'milter_listen': " + address.error().message);
  }
  auto context = MilterContext(settings);
  if (!context) return std::unexpected(context.error());
  gid_t group = static_cast<gid_t>(-1);
  if (!settings.milter_socket_group.empty()) {
    const struct group* entry = getgrnam(settings.milter_socket_group.c_str());
    if (entry == nullptr) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "invalid value for 'milter_socket_group': no group '" +
                           settings.milter_socket_group + "'");
    }
    group = entry->gr_gid;
  }
  const unsigned workers =
      settings.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : settings.threads;
  backend_ = std::make_unique<MilterCoreAdapter>(
      filter, workers, settings.milter_user_layers,
      AdmissionLimits{.max_requests = settings.max_in_flight,
                      .max_bytes = settings.max_in_flight_bytes});
  context->backend = backend_.get();
  context->counters = &counters_;
  context->on_incident = LogIncident;
  auto listener = milter::MilterListener::Create(io_.context(), *address, std::move(*context),
                                                 static_cast<mode_t>(settings.milter_socket_mode));
  if (!listener) return std::unexpected(listener.error());
  listener_ = std::move(*listener);
  const milter::MilterAddress bound = listener_->LocalAddress();
  if (bound.kind == milter::MilterAddress::Kind::kUnix && group != static_cast<gid_t>(-1) &&
      chown(bound.path.c_str(), static_cast<uid_t>(-1), group) != 0) {
    return MakeError(ErrorCode::kUnavailable, "cannot give the milter socket " + bound.path +
                                                  " the group '" + settings.milter_socket_group +
                                                  "'");
  }
  listener_->Run();
  // Connections catch their own exceptions; one reaching the thread is a bug outside them.
  io_.Start([this] { milter::MilterCounters::Add(counters_.internal_errors); });
  return {};
}

std::string MilterFrontEnd::Address() const {
  return listener_ ? milter::FormatMilterAddress(listener_->LocalAddress()) : std::string();
}

void MilterFrontEnd::StopAccepting() {
  if (listener_) listener_->Stop();
}

void MilterFrontEnd::Stop(std::chrono::seconds grace) {
  if (!listener_) return;
  listener_->Stop();  // Closes the acceptor (and removes a Unix socket's file) on the I/O thread.
  io_.Drain(grace, [this] { return listener_->OpenConnections(); });
  backend_->Stop();
  listener_.reset();
}

std::string MilterFrontEnd::Metrics() const {
  return listener_ ? RenderMilterMetrics(counters_, backend_->Exceptions()) : std::string();
}

}  // namespace nbspamd::server
