#include "http_api/http_errors.h"

#include <boost/beast/http/field.hpp>
#include <boost/json/object.hpp>
#include <string>

#include "common/json_text.h"
#include "common/log.h"
#include "common/utf8.h"

namespace nbspamd::http_api {

namespace http = boost::beast::http;

namespace {
constexpr char kRetryAfterSeconds[] = "5";
}  // namespace

http::status HttpStatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return http::status::bad_request;
    case ErrorCode::kNotFound:
      return http::status::not_found;
    case ErrorCode::kFailedPrecondition:
      return http::status::conflict;
    case ErrorCode::kUnauthenticated:
      return http::status::unauthorized;
    case ErrorCode::kPermissionDenied:
      return http::status::forbidden;
    case ErrorCode::kResourceExhausted:
      return http::status::payload_too_large;
    case ErrorCode::kUnavailable:
      return http::status::service_unavailable;
    case ErrorCode::kInsufficientStorage:
      return http::status::insufficient_storage;
    case ErrorCode::kDataLoss:
      return http::status::internal_server_error;
    case ErrorCode::kInternal:
      return http::status::internal_server_error;
    case ErrorCode::kExpired:
      return http::status::gone;
  }
  return http::status::internal_server_error;
}

Response ErrorResponse(http::status status, std::string_view code, std::string_view message,
                       unsigned version) {
  boost::json::object detail;
  detail["code"] = code;
  // Messages quote what the client sent (a query key, an id), and JSON text must be UTF-8.
  detail["message"] = ReplaceInvalidUtf8(message);
  boost::json::object body;
  body["error"] = std::move(detail);
  Response response(status, version);
  response.set(http::field::content_type, "application/json");
  response.body() = WriteJson(body);
  response.body() += '\n';
  response.prepare_payload();
  return response;
}

Response ErrorResponse(const Error& error, unsigned version) {
  const http::status status = HttpStatusOf(error.code);
  if (status == http::status::internal_server_error) {
    LogError("internal error: " + error.message);
    return ErrorResponse(status, ErrorCodeName(error.code), "internal error; see the server log",
                         version);
  }
  Response response = ErrorResponse(status, ErrorCodeName(error.code), error.message, version);
  if (error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kInsufficientStorage) {
    // The store retries by itself every second; a client that waits a few seconds may succeed.
    response.set(http::field::retry_after, kRetryAfterSeconds);
  }
  return response;
}

}  // namespace nbspamd::http_api
