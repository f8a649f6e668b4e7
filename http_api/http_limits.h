// HttpLimits: what one connection may cost the daemon.
#ifndef NBSPAMD_HTTP_API_HTTP_LIMITS_H_
#define NBSPAMD_HTTP_API_HTTP_LIMITS_H_

#include <chrono>
#include <cstddef>

namespace nbspamd::http_api {

struct HttpLimits {
  std::size_t max_body_bytes = 10 << 20;    // A larger body gets 413 and the connection closes.
  std::size_t max_header_bytes = 16 << 10;  // Larger headers get 431 and the connection closes.
  // How long a connection may be idle, or take to send one request, before it is closed.
  std::chrono::seconds idle_timeout{60};
  // Bytes of request bodies being read or handled at once, over every connection (a body counts
  // from its header, by its Content-Length, or max_body_bytes when chunked, until it is
  // answered). A request that would go beyond gets 503 with Retry-After before its body is read,
  // and the connection closes. /healthz and the other probes are never refused.
  std::uint64_t max_in_flight_bytes = std::uint64_t{256} << 20;
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_HTTP_LIMITS_H_
