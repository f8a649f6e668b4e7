#include "server/spamd_front_end.h"

#include <algorithm>
#include <string_view>

#include "common/log.h"
#include "server/incident_log.h"

namespace nbspamd::server {

std::expected<void, Error> SpamdFrontEnd::Start(const config::Settings& settings,
                                                core::SpamFilter& filter,
                                                SpamdCoreAdapter::FeedbackHook on_feedback) {
  boost::system::error_code bad_address;
  const auto address = boost::asio::ip::make_address(settings.spamd_listen_host, bad_address);
  if (bad_address) {
    return MakeError(ErrorCode::kInvalidArgument, "invalid value for 'spamd_listen': '" +
                                                      settings.spamd_listen_host +
                                                      "' is not a numeric IP address");
  }
  auto policy = spamd::ParseTellPolicy(settings.spamd_tell);
  if (!policy) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "invalid value for 'spamd_tell': " + policy.error().message);
  }
  spamd::SpamdOptions options;
  options.limits.max_body_bytes = settings.max_body_bytes;
  options.limits.max_header_bytes = settings.max_header_bytes;
  options.read_timeout = std::chrono::seconds(settings.spamd_read_timeout_seconds);
  options.verdict_timeout = std::chrono::seconds(settings.spamd_verdict_timeout_seconds);
  options.tell = std::move(*policy);
  options.on_incident = LogIncident;
  const unsigned workers =
      settings.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : settings.threads;
  backend_ = std::make_unique<SpamdCoreAdapter>(
      filter, workers, std::move(on_feedback), settings.spamd_user_layers,
      AdmissionLimits{.max_requests = settings.max_in_flight,
                      .max_bytes = settings.max_in_flight_bytes});
  auto listener = spamd::SpamdListener::Create(
      io_.context(), boost::asio::ip::tcp::endpoint(address, settings.spamd_listen_port), *backend_,
      std::move(options));
  if (!listener) {
    backend_.reset();
    return std::unexpected(listener.error());
  }
  listener_ = std::move(*listener);
  listener_->Run();
  io_.Start();  // Connections catch their own exceptions: one reaching the thread is logged.
  return {};
}

std::string SpamdFrontEnd::Address() const {
  if (!listener_) return {};
  const auto endpoint = listener_->LocalEndpoint();
  const std::string host = endpoint.address().to_string();
  return (endpoint.address().is_v6() ? "[" + host + "]" : host) + ":" +
         std::to_string(endpoint.port());
}

void SpamdFrontEnd::StopAccepting() {
  if (listener_ && !stop_requested_.exchange(true)) listener_->Stop();
}

void SpamdFrontEnd::Stop(std::chrono::seconds grace) {
  if (!listener_) return;
  StopAccepting();  // Closes the acceptor on the I/O thread.
  io_.Drain(grace, [this] { return listener_->OpenConnections(); });
  backend_->Stop();
  listener_.reset();
}

std::string SpamdFrontEnd::Metrics() const {
  return listener_ ? RenderSpamdMetrics(listener_->counters(), backend_->Exceptions())
                   : std::string();
}

}  // namespace nbspamd::server
