#include "http_api/router.h"

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/handler_guard.h"
#include "common/log.h"
#include "common/version.h"
#include "core/readiness.h"
#include "http_api/endpoint_call.h"
#include "http_api/endpoints.h"
#include "http_api/json_views.h"
#include "http_api/request_input.h"
#include "model/classifier.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

// Answers one request: finds its endpoint, checks the caller and reads the input, then runs the
// endpoint's handler (endpoint_call.h), which returns the response or nullopt when it answers
// later.
class Handler {
 public:
  Handler(core::SpamFilter& filter, const RouterOptions& options, const Access& access,
          RateLimiter& limiter, Metrics& metrics, const Request& request,
          std::optional<Respond>& respond)
      : options_(options), access_(access), limiter_(limiter), request_(request), call_{filter,
                                                                                        options,
                                                                                        metrics,
                                                                                        request,
                                                                                        "",
                                                                                        respond} {}

  std::optional<Response> Run() {
    auto url = boost::urls::parse_origin_form(request_.target());
    if (!url)
      return Error(http::status::bad_request, "bad_target",
                   "the request target is not a valid path");
    const std::string path(url->encoded_path());
    const EndpointSpec* spec = SpecOf(EndpointOfPath(path));
    if (auto refused = CheckBrowserRequest(request_, spec ? spec->endpoint : Endpoint::kOther,
                                           options_.hosts)) {
      return refused;
    }
    if (spec == nullptr)
      return Error(http::status::not_found, "not_found", "no such endpoint: " + path);
    // HEAD is a GET whose answer goes without its body (RFC 9110, 9.3.2): the transport drops
    // it (http_server/), so the head says what a GET would get.
    const bool get = spec->method == http::verb::get;
    if (request_.method() != spec->method && !(get && request_.method() == http::verb::head)) {
      const std::string allowed = get ? "GET, HEAD" : std::string(http::to_string(spec->method));
      Response response = Error(http::status::method_not_allowed, "method_not_allowed",
                                std::string(path) + " takes " + allowed);
      response.set(http::field::allow, allowed);
      return response;
    }
    const bool guarded =
        spec->guard == Guard::kToken || (spec->guard == Guard::kClassify && access_.auth_classify);
    if (guarded && access_.authenticator.enabled()) {
      auto source = access_.authenticator.Authenticate(request_[http::field::authorization]);
      if (!source) {
        Response response = Error(source.error());
        if (source.error().code == ErrorCode::kUnauthenticated) {
          response.set(http::field::www_authenticate, "Bearer");
        }
        return response;
      }
      call_.source = std::move(*source);
    }
    if (spec->rate_limited && !limiter_.Allow(call_.source, RateLimiter::Clock::now())) {
      Response response = Error(http::status::too_many_requests, "rate_limited",
                                "this source trains faster than train_rate_limit allows");
      response.set(http::field::retry_after, "1");
      return response;
    }
    auto input = ReadInput(request_, url->params(), spec->takes_body);
    if (!input) return std::move(input.error());
    switch (spec->endpoint) {
      case Endpoint::kClassify:
        return HandleClassify(call_, *input);
      case Endpoint::kTrain:
        return HandleTrain(call_, *input);
      case Endpoint::kForget:
        return HandleForget(call_, *input);
      case Endpoint::kStats:
        return HandleStats(call_, *input);
      case Endpoint::kHealth:
        return HandleHealth(call_, *input);
      case Endpoint::kReady:
        return HandleReady(call_, *input);
      case Endpoint::kMetrics:
        return HandleMetricsText(call_, *input);
      case Endpoint::kAdminBackup:
        return HandleBackup(call_, *input);
      case Endpoint::kAdminDump:
        return HandleDump(call_, *input);
      case Endpoint::kAdminLearned:
        return HandleLearned(call_, *input);
      case Endpoint::kAdminRollback:
        return HandleRollback(call_, *input);
      case Endpoint::kAdminRetire:
        return HandleRetire(call_, *input);
      case Endpoint::kAdminExpire:
        return HandleExpire(call_, *input);
      case Endpoint::kAdminReload:
        return HandleReload(call_, *input);
      case Endpoint::kUserStats:
        return HandleUserStats(call_, *input);
      case Endpoint::kUserDelete:
        return HandleUserDelete(call_, *input);
      case Endpoint::kHistory:
        return HandleHistory(call_, *input);
      case Endpoint::kHistoryScan:
        return HandleHistoryScan(call_, *input);
      case Endpoint::kActivity:
        return HandleActivity(call_, *input);
      case Endpoint::kCalibration:
        return HandleCalibration(call_, *input);
      case Endpoint::kConsole:
        return HandleConsole(call_, *input);
      case Endpoint::kUserList:
        return HandleUserList(call_, *input);
      case Endpoint::kModelToken:
        return HandleModelToken(call_, *input);
      case Endpoint::kModelStrongest:
        return HandleModelStrongest(call_, *input);
      case Endpoint::kModelThresholds:
        return HandleModelThresholds(call_, *input);
      case Endpoint::kAdminCheckpoint:
        return HandleCheckpointMake(call_, *input);
      case Endpoint::kAdminCheckpointFile:
        return HandleCheckpointFile(call_, *input);
      case Endpoint::kAdminCheckpointRelease:
        return HandleCheckpointRelease(call_, *input);
      case Endpoint::kOther:
        break;
    }
    return Error(http::status::not_found, "not_found", "no such endpoint: " + path);
  }

 private:
  Response Error(http::status status, std::string_view code, const std::string& message) const {
    return call_.Error(status, code, message);
  }
  Response Error(const nbspamd::Error& error) const { return call_.Error(error); }

  const RouterOptions& options_;
  const Access& access_;
  RateLimiter& limiter_;
  const Request& request_;
  Call call_;
};

}  // namespace

void Router::HandleAsync(const Request& request, Respond respond) const {
  const unsigned version = request.version();
  // Admission: every request but /healthz counts until its response is handed over.
  const EndpointSpec* spec = SpecOf(EndpointOf(request.target()));
  const bool counted = spec == nullptr || spec->admitted;
  std::optional<Respond> pending;
  if (counted) {
    std::optional<Admission::Ticket> ticket = admission_.TryAdmit(0);  // Bytes: the connection's.
    if (!ticket) {
      Response response = ErrorResponse(http::status::service_unavailable, "overloaded",
                                        "too many requests in flight; try again shortly", version);
      response.set(http::field::retry_after, "1");
      respond(std::move(response));
      return;
    }
    // The slot goes back as the answer is handed over.
    pending.emplace([ticket = std::optional<Admission::Ticket>(std::move(*ticket)),
                     respond = std::move(respond)](Response response) mutable {
      ticket.reset();
      respond(std::move(response));
    });
  } else {
    pending.emplace(std::move(respond));
  }
  std::optional<Response> response;
  try {
    response =
        Handler(filter_, options_, CurrentAccess(), limiter_, metrics_, request, pending).Run();
  } catch (...) {
    // A bug or an allocation failure, of whatever type: never let it escape into the connection,
    // and answer it (the in-flight slot goes back with the answer).
    NoteHandlerException("http request", request["X-Request-Id"],
                         metrics_.HandlerExceptions(InternalError::kHttpConnection));
    response = ErrorResponse(
        nbspamd::Error{ErrorCode::kInternal, "the request failed inside the daemon (logged)"},
        version);
    // The answer goes out below, unless the endpoint had passed `pending` on already.
  }
  // Answered now, unless an endpoint passed `pending` on to SpamFilter, whose asynchronous calls
  // answer exactly once, also when they fail.
  if (pending && response) Deliver(*pending, version, [&] { return std::move(*response); });
}

void Router::SetAccess(Access access) const {
  auto version = std::make_unique<const Access>(std::move(access));
  std::lock_guard lock(access_mutex_);
  access_.store(version.get(), std::memory_order_release);
  access_versions_.push_back(std::move(version));
}

Response Router::Handle(const Request& request) const {
  std::promise<Response> promise;
  std::future<Response> future = promise.get_future();
  HandleAsync(request, [&promise](Response response) { promise.set_value(std::move(response)); });
  return future.get();
}

}  // namespace nbspamd::http_api
