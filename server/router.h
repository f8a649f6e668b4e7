// Router: the HTTP API as a pure function from a request to a response, testable without
// sockets (the Beast session only moves bytes). shared/ARCHITECTURE.md and README.md describe the
// endpoints:
//   POST /classify  POST /train  POST /forget  GET /stats  GET /healthz
#ifndef NBSPAMD_SERVER_ROUTER_H_
#define NBSPAMD_SERVER_ROUTER_H_

#include <functional>

#include "server/http_errors.h"
#include "server/spam_filter.h"

namespace nbspamd::server {

// Receives the response to one request.
using Respond = std::move_only_function<void(Response)>;

// Thread-safe as the SpamFilter it calls. Never throws: every failure is a JSON error response.
class Router {
 public:
  explicit Router(SpamFilter& filter) : filter_(filter) {}

  // Answers `request` by calling `respond` exactly once: before returning, except for /train
  // and /forget that reach the training writer, which are answered from the writer thread once
  // their change is durable (so `respond` must be quick: hand the response to the connection's
  // own executor). The request is not used after the call returns.
  // REQUIRES: the request's body is complete. The response's keep-alive is left to the caller.
  void HandleAsync(const Request& request, Respond respond) const;

  // HandleAsync, waiting for the response. REQUIRES: not called from a training completion.
  [[nodiscard]] Response Handle(const Request& request) const;

 private:
  SpamFilter& filter_;
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_ROUTER_H_
