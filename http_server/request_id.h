// The request id a connection gives each request (X-Request-Id, and the log line).
// Both functions are thread-safe.
#ifndef NBSPAMD_HTTP_SERVER_REQUEST_ID_H_
#define NBSPAMD_HTTP_SERVER_REQUEST_ID_H_

#include <string>
#include <string_view>

namespace nbspamd::http_server {

// A client's X-Request-Id is kept when it is 1 to 64 characters of A-Z a-z 0-9 . _ -.
bool IsUsableRequestId(std::string_view id);

// A new request id: a random prefix chosen once per process, and a counter.
std::string NewRequestId();

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_REQUEST_ID_H_
