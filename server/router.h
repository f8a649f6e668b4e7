// Router: the HTTP API as a pure function from a request to a response, testable without
// sockets (the Beast session only moves bytes). shared/ARCHITECTURE.md and README.md describe the
// endpoints:
//   POST /classify  POST /train  POST /forget  GET /stats  GET /healthz
#ifndef NBSPAMD_SERVER_ROUTER_H_
#define NBSPAMD_SERVER_ROUTER_H_

#include "server/http_errors.h"
#include "server/spam_filter.h"

namespace nbspamd::server {

// Thread-safe as the SpamFilter it calls. Never throws: every failure is a JSON error response.
class Router {
 public:
  explicit Router(SpamFilter& filter) : filter_(filter) {}

  // REQUIRES: the request's body is complete. The response's keep-alive is left to the caller.
  [[nodiscard]] Response Handle(const Request& request) const;

 private:
  SpamFilter& filter_;
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_ROUTER_H_
