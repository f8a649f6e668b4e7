// Call: one request on its way through an endpoint handler (internal to http_api/). The router
// matches the endpoint (endpoints.h), checks the caller and reads the input, then hands a Call to
// the endpoint's handler: message_endpoints.cc (/classify, /train, /forget),
// status_endpoints.cc (/stats, /healthz, /readyz, /metrics), user_endpoints.cc (/users/{id}),
// history_endpoints.cc (/history), console_endpoints.cc (/ui/, /activity, /calibration),
// checkpoint_endpoints.cc (/admin/checkpoint) and admin_endpoints.cc (the other /admin/*).
//
// A handler returns its response, or nullopt when it has taken `respond` (TakeRespond) and
// passed it on to the core, which answers later, exactly once. Handlers run on the caller's
// thread; what they pass on must be quick and must not use the Call.
#ifndef NBSPAMD_HTTP_API_ENDPOINT_CALL_H_
#define NBSPAMD_HTTP_API_ENDPOINT_CALL_H_

#include <boost/beast/http/status.hpp>
#include <exception>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"
#include "core/spam_filter.h"
#include "http_api/http_errors.h"
#include "http_api/metrics.h"
#include "http_api/request_input.h"
#include "http_api/router.h"

namespace nbspamd::http_api {

struct Call {
  core::SpamFilter& filter;
  const RouterOptions& options;
  Metrics& metrics;
  const Request& request;
  std::string source;               // The bearer token's name; "" when none is needed.
  std::optional<Respond>& respond;  // Empty once a handler has taken it.

  [[nodiscard]] Response Error(boost::beast::http::status status, std::string_view code,
                               const std::string& message) const {
    return ErrorResponse(status, code, message, request.version());
  }
  [[nodiscard]] Response Error(const nbspamd::Error& error) const {
    return ErrorResponse(error, request.version());
  }
  // Every query parameter and JSON field must be one the endpoint knows: a 400 response if not.
  [[nodiscard]] std::optional<Response> RejectUnknown(
      const Input& input, std::initializer_list<std::string_view> query_keys,
      std::initializer_list<std::string_view> json_keys) const {
    auto known = http_api::RejectUnknown(input, query_keys, json_keys);
    if (!known) return Error(known.error());
    return std::nullopt;
  }
  // The caller's Respond, for a handler that answers later.
  [[nodiscard]] Respond TakeRespond() { return *std::exchange(respond, std::nullopt); }
};

// Hands the response that `build` makes to `respond`; a build that throws (a bug or an allocation
// failure) gives an internal error instead, so `respond` always runs.
template <typename Build>
void Deliver(Respond& respond, unsigned version, Build build) noexcept {
  Response response;
  try {
    response = build();
  } catch (const std::exception& e) {
    response = ErrorResponse(nbspamd::Error{ErrorCode::kInternal, e.what()}, version);
  }
  respond(std::move(response));
}

// message_endpoints.cc
[[nodiscard]] std::optional<Response> HandleClassify(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleTrain(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleForget(Call& call, const Input& input);
// console_endpoints.cc
[[nodiscard]] std::optional<Response> HandleConsole(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleActivity(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleCalibration(Call& call, const Input& input);
// status_endpoints.cc
[[nodiscard]] std::optional<Response> HandleStats(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleHealth(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleReady(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleMetricsText(Call& call, const Input& input);
// user_endpoints.cc
[[nodiscard]] std::optional<Response> HandleUserList(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleUserStats(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleUserDelete(Call& call, const Input& input);
// history_endpoints.cc
[[nodiscard]] std::optional<Response> HandleHistory(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleHistoryScan(Call& call, const Input& input);
// model_endpoints.cc
[[nodiscard]] std::optional<Response> HandleModelToken(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleModelStrongest(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleModelThresholds(Call& call, const Input& input);
// admin_endpoints.cc
[[nodiscard]] std::optional<Response> HandleBackup(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleDump(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleLearned(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleRollback(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleRetire(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleExpire(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleReload(Call& call, const Input& input);
// checkpoint_endpoints.cc
[[nodiscard]] std::optional<Response> HandleCheckpointMake(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleCheckpointFile(Call& call, const Input& input);
[[nodiscard]] std::optional<Response> HandleCheckpointRelease(Call& call, const Input& input);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_ENDPOINT_CALL_H_
