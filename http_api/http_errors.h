// How errors look on the wire: one table from ErrorCode to HTTP status, and the JSON error body
// {"error": {"code": "...", "message": "..."}} that every failed request gets.
#ifndef NBSPAMD_HTTP_API_HTTP_ERRORS_H_
#define NBSPAMD_HTTP_API_HTTP_ERRORS_H_

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string_view>

#include "common/error.h"

namespace nbspamd::http_api {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

// A response with this header has its body in the file the header names (a large answer such as
// GET /admin/dump): the connection sends that file's bytes as the body, streaming them from
// disk, removes the file and never sends the header itself.
inline constexpr char kBodyFileField[] = "X-Nbspamd-Body-File";
// With kBodyFileField: the body is the file's bytes from this decimal offset on (a Range request
// resumed there; the handler sets the status and Content-Range). Never sent either.
inline constexpr char kBodyFileOffsetField[] = "X-Nbspamd-Body-Offset";

// 400 kInvalidArgument, 401 kUnauthenticated, 403 kPermissionDenied, 404 kNotFound,
// 409 kFailedPrecondition, 413 kResourceExhausted,
// 503 kUnavailable, 507 kInsufficientStorage, 500 kDataLoss and kInternal (faults of the server,
// never of the request).
[[nodiscard]] boost::beast::http::status HttpStatusOf(ErrorCode code);

// A JSON error response. `code` is a stable machine-readable name ("invalid_argument",
// "method_not_allowed"); `message` is for people.
[[nodiscard]] Response ErrorResponse(boost::beast::http::status status, std::string_view code,
                                     std::string_view message, unsigned version = 11);

// The response for `error`. Internal failures get a generic message: their details are logged,
// not sent. 503 and 507 carry `Retry-After`.
[[nodiscard]] Response ErrorResponse(const Error& error, unsigned version = 11);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_HTTP_ERRORS_H_
