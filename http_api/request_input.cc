#include "http_api/request_input.h"

#include <algorithm>
#include <boost/beast/http/field.hpp>
#include <boost/json/parse.hpp>
#include <utility>

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// The media type of the body without parameters, lower-case ("" when absent).
std::string MediaType(const Request& request) {
  std::string_view type = request[http::field::content_type];
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  return Lower(type);
}

// Raw messages come as text/*, message/* (message/rfc822), application/octet-stream, no type,
// or application/x-www-form-urlencoded (what `curl --data-binary` sends by default).
bool IsRawMessageType(std::string_view type) {
  return type.empty() || type.starts_with("text/") || type.starts_with("message/") ||
         type == "application/octet-stream" || type == "application/x-www-form-urlencoded";
}

}  // namespace

std::expected<Input, Response> ReadInput(const Request& request, boost::urls::params_view params,
                                         bool takes_body) {
  const auto fail = [&request](http::status status, std::string_view code,
                               const std::string& message) {
    return std::unexpected(ErrorResponse(status, code, message, request.version()));
  };
  Input input;
  input.body = request.body();
  for (const auto& param : params) {
    if (!input.query.emplace(param.key, param.value).second) {
      return fail(http::status::bad_request, "invalid_argument",
                  "query parameter '" + param.key + "' is given twice");
    }
  }
  // A request with neither Content-Length nor chunking has an empty body (RFC 9112, 6.3): what
  // `curl -X POST URL` sends for a /forget by id or a /train by scan id.
  if (!takes_body) return input;
  const std::string type = MediaType(request);
  if (type == "application/json") {
    input.is_json = true;
    boost::system::error_code ec;
    json::value body = json::parse(request.body(), ec);
    if (ec) {
      return fail(http::status::bad_request, "invalid_json",
                  "the body is not valid JSON: " + ec.message());
    }
    if (!body.is_object()) {
      return fail(http::status::bad_request, "invalid_json", "the JSON body must be an object");
    }
    input.fields = std::move(body.as_object());
  } else if (!IsRawMessageType(type)) {
    return fail(http::status::unsupported_media_type, "unsupported_media_type",
                "send the message as raw bytes (message/rfc822, text/plain, "
                "application/octet-stream) or as application/json");
  }
  return input;
}

std::expected<void, Error> RejectUnknown(const Input& input,
                                         std::initializer_list<std::string_view> query_keys,
                                         std::initializer_list<std::string_view> json_keys) {
  for (const auto& [key, value] : input.query) {
    if (std::find(query_keys.begin(), query_keys.end(), key) == query_keys.end()) {
      return MakeError(ErrorCode::kInvalidArgument, "unknown query parameter '" + key + "'");
    }
  }
  for (const auto& field : input.fields) {
    if (std::find(json_keys.begin(), json_keys.end(), field.key()) == json_keys.end()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "unknown JSON field '" + std::string(field.key()) + "'");
    }
  }
  return {};
}

std::expected<std::optional<std::string_view>, Error> Parameter(const Input& input,
                                                                std::string_view name) {
  if (const json::value* value = input.fields.if_contains(name)) {
    if (!value->is_string()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "JSON field '" + std::string(name) + "' must be a string");
    }
    return std::string_view(value->as_string());
  }
  if (const auto it = input.query.find(name); it != input.query.end()) {
    return std::string_view(it->second);
  }
  return std::nullopt;
}

std::expected<std::string_view, Error> MessageOf(const Input& input) {
  if (!input.is_json) return input.body;
  const json::value* text = input.fields.if_contains("text");
  if (text == nullptr)
    return MakeError(ErrorCode::kInvalidArgument, "JSON field 'text' is missing");
  if (!text->is_string()) {
    return MakeError(ErrorCode::kInvalidArgument, "JSON field 'text' must be a string");
  }
  return std::string_view(text->as_string());
}

}  // namespace nbspamd::http_api
