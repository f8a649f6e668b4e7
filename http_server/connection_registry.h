// HttpConnectionRegistry: the HTTP server's live connections, so that shutdown can tell each one
// to finish its request (common/connection_registry.h), and the admission of their request
// bodies' bytes (common/admission.h; HttpLimits::max_in_flight_bytes), which every connection
// shares. Thread-safe.
#ifndef NBSPAMD_HTTP_SERVER_CONNECTION_REGISTRY_H_
#define NBSPAMD_HTTP_SERVER_CONNECTION_REGISTRY_H_

#include <cstdint>
#include <limits>

#include "common/admission.h"
#include "common/connection_registry.h"

namespace nbspamd::http_server {

class HttpConnection;

class HttpConnectionRegistry : public ConnectionRegistry<HttpConnection> {
 public:
  // Requests are counted by the router (max_in_flight); bytes here.
  explicit HttpConnectionRegistry(std::uint64_t max_in_flight_bytes)
      : body_bytes({.max_requests = std::numeric_limits<std::size_t>::max(),
                    .max_bytes = max_in_flight_bytes}) {}

  Admission body_bytes;
};

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_CONNECTION_REGISTRY_H_
