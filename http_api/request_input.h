// RequestInput: what an endpoint reads from a request, once the router has matched it: the
// query parameters and the body, either a raw message or the fields of a JSON object. The
// checks every endpoint shares (duplicate or unknown parameters, Content-Length, media type,
// JSON syntax) live here, so each endpoint only asks for its values.
//
//   auto input = ReadInput(request, url->params(), /*takes_body=*/true);
//   if (!input) return std::move(input.error());           // 400, 411 or 415, ready to send
//   if (auto ok = RejectUnknown(*input, {"id"}, {"text", "id"}); !ok) ...
//   auto id = Parameter(*input, "id");                     // JSON field first, else query
//   auto message = MessageOf(*input);                      // raw body or JSON "text"
//
// The Input views the request: it must not outlive it. Pure functions, thread-safe.
#ifndef NBSPAMD_HTTP_API_REQUEST_INPUT_H_
#define NBSPAMD_HTTP_API_REQUEST_INPUT_H_

#include <boost/json/object.hpp>
#include <boost/url/params_view.hpp>
#include <expected>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "http_api/http_errors.h"

namespace nbspamd::http_api {

struct Input {
  std::map<std::string, std::string, std::less<>> query;
  bool is_json = false;
  boost::json::object fields;  // When is_json.
  std::string_view body;       // The raw body.
};

// The query parameters of `params` and, when `takes_body`, the body. Errors, as responses:
// 400 for a parameter given twice or a JSON body that is not an object, 411 without a
// Content-Length (or chunked encoding), 415 for a body that is neither a raw message nor JSON.
[[nodiscard]] std::expected<Input, Response> ReadInput(const Request& request,
                                                       boost::urls::params_view params,
                                                       bool takes_body);

// Errors: kInvalidArgument for a query parameter or JSON field the endpoint does not know.
[[nodiscard]] std::expected<void, Error> RejectUnknown(
    const Input& input, std::initializer_list<std::string_view> query_keys,
    std::initializer_list<std::string_view> json_keys);

// A string parameter from the JSON body when there is one, else from the query; nullopt when
// neither has it. Errors: kInvalidArgument for a JSON field that is not a string.
[[nodiscard]] std::expected<std::optional<std::string_view>, Error> Parameter(
    const Input& input, std::string_view name);

// The message: the raw body, or the JSON body's "text". Errors: kInvalidArgument when "text" is
// missing or not a string.
[[nodiscard]] std::expected<std::string_view, Error> MessageOf(const Input& input);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_REQUEST_INPUT_H_
