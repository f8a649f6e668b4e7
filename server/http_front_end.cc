#include "server/http_front_end.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <memory>
#include <utility>

#include "http_server/tls_context.h"
#include "server/incident_log.h"
#include "server/model_expiry_setup.h"

namespace nbspamd::server {

std::expected<http_server::ServerOptions, Error> HttpServerOptions(
    const config::Settings& settings, std::vector<config::AuthToken> tokens,
    std::function<std::string()> extra_metrics, std::function<void()> on_shutdown) {
  http_server::ServerOptions options;
  if (settings.tls_cert_file.empty() != settings.tls_key_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tls_cert_file and tls_key_file go together: set both for HTTPS, or neither");
  }
  if (!settings.tls_cert_file.empty()) {
    auto tls = http_server::MakeTlsContext(settings.tls_cert_file, settings.tls_key_file);
    if (!tls) return std::unexpected(std::move(tls.error()));
    options.tls = std::move(*tls);
  }
  options.host = settings.listen_host;
  options.port = settings.listen_port;
  options.threads = settings.threads;
  options.limits.max_body_bytes = settings.max_body_bytes;
  options.limits.max_in_flight_bytes = settings.max_in_flight_bytes;
  options.limits.max_header_bytes = settings.max_header_bytes;
  options.limits.idle_timeout = std::chrono::seconds(settings.idle_timeout_seconds);
  options.shutdown_timeout = std::chrono::seconds(settings.shutdown_timeout_seconds);
  options.router.authenticator = http_api::Authenticator(std::move(tokens));
  options.router.auth_classify = settings.auth_classify;
  std::array<char, 256> machine{};
  if (gethostname(machine.data(), machine.size() - 1) != 0) machine[0] = '\0';
  options.router.hosts =
      http_api::HostNames::Of(settings.http_hosts, settings.listen_host, machine.data());
  options.router.max_in_flight = settings.max_in_flight;
  options.router.backup_dir = settings.backup_dir;
  // Checkpoints for joining daemons: in the data folder, so that RocksDB makes them of hard links.
  options.router.checkpoints =
      std::make_shared<http_api::CheckpointShelf>(http_api::CheckpointShelfOptions{
          .dir = (std::filesystem::path(settings.data_dir) / http_api::kCheckpointShelfFolder)
                     .string()});
  options.router.train_rate_limit = settings.train_rate_limit;
  options.router.expiry = ExpiryPolicyOf(settings);
  options.router.extra_metrics = std::move(extra_metrics);
  options.on_shutdown = std::move(on_shutdown);
  options.on_incident = LogIncident;
  return options;
}

}  // namespace nbspamd::server
