#include "server/spamd_front_end.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <exception>
#include <future>
#include <memory>
#include <string_view>

#include "common/log.h"

namespace nbspamd::server {
namespace {

// Waits (up to 10 s) until `io` has run the handlers posted to it before this call.
void WaitForPostedWork(boost::asio::io_context& io) {
  auto reached = std::make_shared<std::promise<void>>();
  std::future<void> done = reached->get_future();
  boost::asio::post(io, [reached] { reached->set_value(); });
  done.wait_for(std::chrono::seconds(10));
}

}  // namespace

std::expected<void, Error> SpamdFrontEnd::Start(const config::Settings& settings,
                                                core::SpamFilter& filter,
                                                SpamFilterSpamdBackend::FeedbackHook on_feedback) {
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
  options.tell = std::move(*policy);
  options.on_incident = [](spamd::SpamdIncident incident, std::string_view detail) {
    const std::string line =
        "spamd " + std::string(spamd::SpamdIncidentName(incident)) + ": " + std::string(detail);
    if (incident == spamd::SpamdIncident::kBackendError) {
      LogDebug(line);
    } else {
      LogWarning(line);
    }
  };
  const unsigned workers =
      settings.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : settings.threads;
  backend_ = std::make_unique<SpamFilterSpamdBackend>(filter, workers, std::move(on_feedback));
  auto listener = spamd::SpamdListener::Create(
      io_, boost::asio::ip::tcp::endpoint(address, settings.spamd_listen_port), *backend_,
      std::move(options));
  if (!listener) {
    backend_.reset();
    return std::unexpected(listener.error());
  }
  listener_ = std::move(*listener);
  listener_->Run();
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        // Sessions catch their own; an exception here is a bug outside any of them.
        LogError(std::string("spamd I/O thread: ") + e.what());
      }
    }
  });
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
  StopAccepting();
  // Stop runs on the I/O thread (closing the acceptor): wait for it before stopping that
  // thread. A handler posted now runs after it.
  WaitForPostedWork(io_);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (listener_->OpenConnections() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (listener_->OpenConnections() > 0) {
    LogWarning("spamd connections still open after the shutdown timeout: closing them");
  }
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
  // Run here what was still queued when the thread stopped (the listener's Stop, when its strand
  // was busy as the barrier above ran), so that it has closed (and unlinked) for certain.
  io_.restart();
  io_.poll();
  backend_->Stop();
  listener_.reset();
}

std::string SpamdFrontEnd::Metrics() const {
  return listener_ ? RenderSpamdMetrics(listener_->counters()) : std::string();
}

}  // namespace nbspamd::server
