// The answer to a HEAD request (RFC 9110, 9.3.2): the head of the answer a GET gets.
#ifndef NBSPAMD_HTTP_SERVER_HEAD_RESPONSE_H_
#define NBSPAMD_HTTP_SERVER_HEAD_RESPONSE_H_

#include <cstdint>

#include "http_api/http_errors.h"

namespace nbspamd::http_server {

// `response` (the Router's answer to the request as a GET) without its body, its Content-Length
// that of the body left out. A body in a file (http_api::kBodyFileField) is measured and the
// file removed; when it cannot be measured, the answer is a 500 head. Thread-safe.
http_api::Response HeadOf(http_api::Response response);

// The offset a body file is sent from (http_api::kBodyFileOffsetField), 0 without one or for one
// that is not a decimal number.
[[nodiscard]] std::uint64_t BodyFileOffset(const http_api::Response& response);

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_HEAD_RESPONSE_H_
