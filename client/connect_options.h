// Connection settings of a command, from its ClientOptions: where the daemon is, the token and
// the per-request deadline, ready to open HttpConnections.
#ifndef NBSPAMD_CLIENT_CONNECT_OPTIONS_H_
#define NBSPAMD_CLIENT_CONNECT_OPTIONS_H_

#include <chrono>
#include <cmath>
#include <expected>
#include <memory>
#include <string>

#include "client/command_line.h"
#include "client/http_connection.h"
#include "common/error.h"

namespace nbspamd::client {

struct ConnectOptions {
  ServerAddress server;
  std::string token;
  std::chrono::milliseconds timeout{30000};

  [[nodiscard]] std::unique_ptr<HttpConnection> Open() const {
    return std::make_unique<HttpConnection>(server, token, timeout);
  }
};

// kInvalidArgument when --server is not HOST:PORT.
[[nodiscard]] inline std::expected<ConnectOptions, Error> MakeConnectOptions(
    const ClientOptions& options) {
  auto server = ParseServer(options.server);
  if (!server) return std::unexpected(server.error());
  return ConnectOptions{
      .server = std::move(*server),
      .token = options.token,
      .timeout = std::chrono::milliseconds(std::llround(options.timeout_seconds * 1000))};
}

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_CONNECT_OPTIONS_H_
