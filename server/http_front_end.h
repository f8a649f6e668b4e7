// The HTTP front end's wiring, as milter_front_end.h and spamd_front_end.h are the others': the
// server options the settings give, with the other front ends' metrics and shutdown hooks.
// The HTTP server (http_server/server.h) runs on the calling thread (Server::Run) and owns its I/O
// threads; the milter and spamd front ends have a FrontEndThread each.
#ifndef NBSPAMD_SERVER_HTTP_FRONT_END_H_
#define NBSPAMD_SERVER_HTTP_FRONT_END_H_

#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/auth_tokens.h"
#include "config/settings.h"
#include "http_server/server.h"

namespace nbspamd::server {

// The options of the daemon's HTTP server: listen address, threads, limits and timeouts, TLS,
// `tokens` for authentication, the router's settings (with a checkpoint shelf in
// <data_dir>/checkpoints-served, cleared now: http_api/checkpoint_shelf.h); `extra_metrics` appends
// the other front ends' metrics to GET /metrics, `on_shutdown` stops them accepting when a signal
// stops the server. Errors: kInvalidArgument for only one of tls_cert_file and tls_key_file, or for
// a certificate or key that cannot be used (http_server/tls_context.h).
[[nodiscard]] std::expected<http_server::ServerOptions, Error> HttpServerOptions(
    const config::Settings& settings, std::vector<config::AuthToken> tokens,
    std::function<std::string()> extra_metrics, std::function<void()> on_shutdown);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_HTTP_FRONT_END_H_
