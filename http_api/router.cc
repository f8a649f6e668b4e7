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

#include "common/log.h"
#include "common/version.h"
#include "core/readiness.h"
#include "http_api/endpoints.h"
#include "http_api/json_views.h"
#include "http_api/request_input.h"
#include "model/classifier.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::size_t kMaxExplain = 1000;
constexpr std::size_t kMaxAdminLimit = 100000;

std::expected<std::size_t, Error> ParseExplain(std::string_view text) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > kMaxExplain) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "explain must be a whole number from 0 to " + std::to_string(kMaxExplain));
  }
  return value;
}

// Counts a training outcome for its source, and the feedback it gave. Runs where training
// completes: quick, no I/O.
void RecordTraining(Metrics& metrics, const std::string& source,
                    const std::expected<core::TrainOutcome, nbspamd::Error>& outcome) {
  if (!outcome) return metrics.RecordTraining(source, TrainingEvent::kFailed);
  if (outcome->queued) return;  // Not applied here yet: its outcome is not known.
  static constexpr TrainingEvent kEvents[] = {TrainingEvent::kLearned, TrainingEvent::kRelearned,
                                              TrainingEvent::kUnchanged};
  metrics.RecordTraining(source, kEvents[static_cast<int>(outcome->status)]);
  if (outcome->feedback) metrics.RecordFeedback(*outcome->feedback);
}

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

// "backups/nbspamd-20261123T104501Z": a new folder name for a backup made now.
std::string BackupPath(const std::string& backup_dir, int attempt) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  std::string name = "nbspamd-";
  name.append(stamp);
  if (attempt > 0) name.append("-").append(std::to_string(attempt + 1));
  return (std::filesystem::path(backup_dir) / name).string();
}

// Answers one request. An endpoint returns its response, or nullopt when it has passed
// `respond_` on to the training writer, which answers later.
class Handler {
 public:
  Handler(core::SpamFilter& filter, const RouterOptions& options, RateLimiter& limiter,
          Metrics& metrics, const Request& request, std::optional<Respond>& respond)
      : filter_(filter),
        options_(options),
        limiter_(limiter),
        metrics_(metrics),
        request_(request),
        respond_(respond) {}

  std::optional<Response> Run() {
    auto url = boost::urls::parse_origin_form(request_.target());
    if (!url)
      return Error(http::status::bad_request, "bad_target",
                   "the request target is not a valid path");
    const std::string path(url->encoded_path());
    const EndpointSpec* spec = SpecOf(EndpointOfPath(path));
    if (spec == nullptr)
      return Error(http::status::not_found, "not_found", "no such endpoint: " + path);
    if (request_.method() != spec->method) {
      Response response =
          Error(http::status::method_not_allowed, "method_not_allowed",
                std::string(path) + " takes " + std::string(http::to_string(spec->method)));
      response.set(http::field::allow, http::to_string(spec->method));
      return response;
    }
    const bool guarded =
        spec->guard == Guard::kToken || (spec->guard == Guard::kClassify && options_.auth_classify);
    if (guarded && options_.authenticator.enabled()) {
      auto source = options_.authenticator.Authenticate(request_[http::field::authorization]);
      if (!source) {
        Response response = Error(source.error());
        if (source.error().code == ErrorCode::kUnauthenticated) {
          response.set(http::field::www_authenticate, "Bearer");
        }
        return response;
      }
      source_ = std::move(*source);
    }
    if (spec->rate_limited && !limiter_.Allow(source_, RateLimiter::Clock::now())) {
      Response response = Error(http::status::too_many_requests, "rate_limited",
                                "this source trains faster than train_rate_limit allows");
      response.set(http::field::retry_after, "1");
      return response;
    }
    auto input = ReadInput(request_, url->params(), spec->takes_body);
    if (!input) return std::move(input.error());
    switch (spec->endpoint) {
      case Endpoint::kClassify:
        return Classify(*input);
      case Endpoint::kTrain:
        return Train(*input);
      case Endpoint::kForget:
        return Forget(*input);
      case Endpoint::kStats:
        return Stats(*input);
      case Endpoint::kHealth:
        return Health(*input);
      case Endpoint::kReady:
        return Ready(*input);
      case Endpoint::kMetrics:
        return MetricsText(*input);
      case Endpoint::kAdminBackup:
        return Backup(*input);
      case Endpoint::kAdminLearned:
        return Learned(*input);
      case Endpoint::kAdminRollback:
        return Rollback(*input);
      case Endpoint::kOther:
        break;
    }
    return Error(http::status::not_found, "not_found", "no such endpoint: " + path);
  }

 private:
  Response Error(http::status status, std::string_view code, const std::string& message) const {
    return ErrorResponse(status, code, message, request_.version());
  }
  Response Error(const nbspamd::Error& error) const {
    return ErrorResponse(error, request_.version());
  }
  // Every query parameter and JSON field must be one the endpoint knows: a 400 response if not.
  std::optional<Response> RejectUnknown(const Input& input,
                                        std::initializer_list<std::string_view> query_keys,
                                        std::initializer_list<std::string_view> json_keys) const {
    auto known = http_api::RejectUnknown(input, query_keys, json_keys);
    if (!known) return Error(known.error());
    return std::nullopt;
  }

  std::optional<Response> Classify(const Input& input) {
    if (auto rejected = RejectUnknown(input, {"explain", "id"}, {"text", "explain", "id"}))
      return *rejected;
    std::size_t explain = 0;
    if (const json::value* value = input.fields.if_contains("explain")) {
      if (!value->is_int64() && !value->is_uint64()) {
        return Error(http::status::bad_request, "invalid_argument",
                     "JSON field 'explain' must be a whole number");
      }
      auto parsed = ParseExplain(json::serialize(*value));
      if (!parsed) return Error(parsed.error());
      explain = *parsed;
    } else if (const auto it = input.query.find("explain"); it != input.query.end()) {
      auto parsed = ParseExplain(it->second);
      if (!parsed) return Error(parsed.error());
      explain = *parsed;
    }
    auto id = Parameter(input, "id");
    if (!id) return Error(id.error());
    auto message = MessageOf(input);
    if (!message) return Error(message.error());
    auto outcome = filter_.Classify(*message, explain, *id);
    if (!outcome) return Error(outcome.error());
    metrics_.RecordVerdict(outcome->result.label_index);
    metrics_.RecordSpamVerdict(outcome->result.verdict);
    return JsonResponse(ClassifyJson(*outcome, explain), request_.version());
  }

  std::optional<Response> Train(const Input& input) {
    if (auto rejected = RejectUnknown(input, {"label", "id"}, {"text", "label", "id"}))
      return *rejected;
    auto label = Parameter(input, "label");
    if (!label) return Error(label.error());
    if (!*label)
      return Error(http::status::bad_request, "invalid_argument",
                   "the label is missing: give ?label=spam or ?label=ham");
    auto id = Parameter(input, "id");
    if (!id) return Error(id.error());
    auto message = MessageOf(input);
    if (!message) return Error(message.error());
    filter_.TrainAsync(*message, **label, *id, source_,
                       [&metrics = metrics_, version = request_.version(), source = source_,
                        respond = TakeRespond()](
                           std::expected<core::TrainOutcome, nbspamd::Error> outcome) mutable {
                         RecordTraining(metrics, source, outcome);
                         Deliver(respond, version, [&] {
                           if (!outcome) return ErrorResponse(outcome.error(), version);
                           return JsonResponse(TrainJson(*outcome), version);
                         });
                       });
    return std::nullopt;
  }

  std::optional<Response> Forget(const Input& input) {
    if (auto rejected = RejectUnknown(input, {"id"}, {"text", "id"})) return *rejected;
    auto id = Parameter(input, "id");
    if (!id) return Error(id.error());
    std::optional<std::string_view> message;
    if (!*id) {
      auto body = MessageOf(input);
      if (!body) return Error(body.error());
      if (body->empty()) {
        return Error(http::status::bad_request, "invalid_argument",
                     "give ?id= or the message to forget");
      }
      message = *body;
    }
    core::ForgetDone done =
        [&metrics = metrics_, version = request_.version(), source = source_,
         respond =
             TakeRespond()](std::expected<core::ForgetOutcome, nbspamd::Error> forgotten) mutable {
          if (!forgotten || !forgotten->queued) {
            metrics.RecordTraining(source,
                                   forgotten ? TrainingEvent::kForgotten : TrainingEvent::kFailed);
          }
          Deliver(respond, version, [&] {
            if (!forgotten) return ErrorResponse(forgotten.error(), version);
            return JsonResponse(ForgetJson(*forgotten), version);
          });
        };
    if (message) {
      filter_.ForgetMessageAsync(*message, std::move(done));
    } else {
      filter_.ForgetIdAsync(**id, std::move(done));
    }
    return std::nullopt;
  }

  std::optional<Response> Stats(const Input& input) {
    if (auto rejected = RejectUnknown(input, {}, {})) return *rejected;
    return JsonResponse(StatsJson(*filter_.Stats(), filter_.options()), request_.version());
  }

  std::optional<Response> Backup(const Input& input) {
    if (auto rejected = RejectUnknown(input, {}, {})) return *rejected;
    // A second backup in the same second gets the next free name.
    constexpr int kAttempts = 100;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      const std::string path = BackupPath(options_.backup_dir, attempt);
      auto written = filter_.Backup(path);
      if (written) {
        LogInfo("model backed up to " + path);
        return JsonResponse(json::object{{"path", path}, {"status", "created"}},
                            request_.version());
      }
      if (written.error().code != ErrorCode::kInvalidArgument) {
        LogError("backup to " + path + " failed: " + written.error().message);
        return Error(written.error());
      }
    }
    return Error(http::status::conflict, "failed_precondition",
                 "too many backups in one second; try again");
  }

  // The source and time window of /admin/learned and /admin/rollback: ?source= (required; ""
  // names training done without a token), ?since= and ?until= in Unix seconds (default: all
  // time), ?limit= (1 to kMaxAdminLimit, default `default_limit`).
  struct Selection {
    std::string source;
    std::int64_t since = 0;
    std::int64_t until = std::numeric_limits<std::int64_t>::max();
    std::size_t limit = 0;
  };
  std::expected<Selection, nbspamd::Error> Select(const Input& input,
                                                  std::size_t default_limit) const {
    Selection selection;
    selection.limit = default_limit;
    const auto source = input.query.find("source");
    if (source == input.query.end()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "give ?source=NAME (the token name; empty for training without a token)");
    }
    selection.source = source->second;
    for (auto [name, value] : {std::pair{"since", &selection.since}, {"until", &selection.until}}) {
      const auto it = input.query.find(name);
      if (it == input.query.end()) continue;
      const auto [end, error] =
          std::from_chars(it->second.data(), it->second.data() + it->second.size(), *value);
      if (error != std::errc() || end != it->second.data() + it->second.size() || *value < 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         std::string(name) + " must be a Unix time in seconds");
      }
    }
    if (const auto it = input.query.find("limit"); it != input.query.end()) {
      const auto [end, error] = std::from_chars(
          it->second.data(), it->second.data() + it->second.size(), selection.limit);
      if (error != std::errc() || end != it->second.data() + it->second.size() ||
          selection.limit == 0 || selection.limit > kMaxAdminLimit) {
        return MakeError(ErrorCode::kInvalidArgument, "limit must be a whole number from 1 to " +
                                                          std::to_string(kMaxAdminLimit));
      }
    }
    return selection;
  }

  std::optional<Response> Learned(const Input& input) {
    if (auto rejected = RejectUnknown(input, {"source", "since", "until", "limit"}, {}))
      return *rejected;
    auto selection = Select(input, /*default_limit=*/1000);
    if (!selection) return Error(selection.error());
    auto listed = filter_.ListLearned(selection->source, selection->since, selection->until,
                                      selection->limit);
    if (!listed) return Error(listed.error());
    return JsonResponse(LearnedJson(*listed), request_.version());
  }

  std::optional<Response> Rollback(const Input& input) {
    if (auto rejected = RejectUnknown(input, {"source", "since", "until", "limit"}, {}))
      return *rejected;
    auto selection = Select(input, /*default_limit=*/10000);
    if (!selection) return Error(selection.error());
    LogInfo("rolling back what source '" + selection->source + "' trained from " +
            std::to_string(selection->since) + " to " + std::to_string(selection->until));
    filter_.RollbackAsync(
        selection->source, selection->since, selection->until, selection->limit,
        [version = request_.version(), source = selection->source,
         respond = TakeRespond()](std::expected<std::uint64_t, nbspamd::Error> forgotten) mutable {
          Deliver(respond, version, [&] {
            if (!forgotten) return ErrorResponse(forgotten.error(), version);
            return JsonResponse(json::object{{"source", source}, {"forgotten", *forgotten}},
                                version);
          });
        });
    return std::nullopt;
  }

  std::optional<Response> MetricsText(const Input& input) {
    if (auto rejected = RejectUnknown(input, {}, {})) return *rejected;
    Response response(http::status::ok, request_.version());
    response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    const std::vector<storage::StorageProperty> storage = filter_.StorageProperties();
    response.body() = metrics_.Render(*filter_.Stats(), storage, kVersion);
    response.body() += RenderCalibrationMetrics(*filter_.Calibration());
    response.body() += RenderStoreHealthMetrics(filter_.StoreHealth());
    std::array<std::uint64_t, kInternalErrorCount> internal{};
    for (const InternalError where : {InternalError::kHttpSession, InternalError::kIoThread}) {
      internal[static_cast<std::size_t>(where)] = metrics_.HandlerExceptionCount(where);
    }
    internal[static_cast<std::size_t>(InternalError::kTrainingCompletion)] =
        filter_.TrainingCompletionExceptions();
    const std::optional<core::ClusterStatus> cluster = filter_.Cluster();
    if (cluster) {
      internal[static_cast<std::size_t>(InternalError::kClusterCompletion)] =
          cluster->completion_exceptions;
      internal[static_cast<std::size_t>(InternalError::kClusterReport)] = cluster->report_errors;
    }
    response.body() += RenderInternalErrorMetrics(internal);
    if (cluster) response.body() += RenderClusterMetrics(*cluster);
    response.prepare_payload();
    return response;
  }

  // Liveness: the daemon serves. `ready` says whether it does all of its work (see /readyz).
  std::optional<Response> Health(const Input& input) {
    if (auto rejected = RejectUnknown(input, {}, {})) return *rejected;
    const core::Readiness readiness = core::ReadinessOf(filter_.StoreHealth(), filter_.Cluster());
    return JsonResponse(json::object{{"status", "ok"}, {"ready", readiness.ready()}},
                        request_.version());
  }

  // Readiness: 200 {"status": "ready"}, or 503 {"status": "degraded", "degraded": [reasons]}.
  std::optional<Response> Ready(const Input& input) {
    if (auto rejected = RejectUnknown(input, {}, {})) return *rejected;
    const core::Readiness readiness = core::ReadinessOf(filter_.StoreHealth(), filter_.Cluster());
    if (readiness.ready()) {
      return JsonResponse(json::object{{"status", "ready"}}, request_.version());
    }
    json::array reasons;
    for (const std::string& reason : readiness.degraded) reasons.emplace_back(reason);
    Response response = JsonResponse(
        json::object{{"status", "degraded"}, {"degraded", std::move(reasons)}}, request_.version());
    response.result(http::status::service_unavailable);
    return response;
  }

  // The caller's Respond, for an endpoint that answers later.
  Respond TakeRespond() { return *std::exchange(respond_, std::nullopt); }

  core::SpamFilter& filter_;
  const RouterOptions& options_;
  RateLimiter& limiter_;
  Metrics& metrics_;
  std::string source_;  // The bearer token's name; "" when none is needed.
  const Request& request_;
  std::optional<Respond>& respond_;  // Empty once an endpoint has taken it.
};

}  // namespace

void Router::HandleAsync(const Request& request, Respond respond) const {
  const unsigned version = request.version();
  // Admission: every request but /healthz counts until its response is handed over.
  const EndpointSpec* spec = SpecOf(EndpointOf(request.target()));
  const bool counted = spec == nullptr || spec->admitted;
  if (counted && in_flight_.fetch_add(1) >= options_.max_in_flight) {
    in_flight_.fetch_sub(1);
    Response response = ErrorResponse(http::status::service_unavailable, "overloaded",
                                      "too many requests in flight; try again shortly", version);
    response.set(http::field::retry_after, "1");
    respond(std::move(response));
    return;
  }
  std::optional<Respond> pending;
  if (counted) {
    pending.emplace([this, respond = std::move(respond)](Response response) mutable {
      in_flight_.fetch_sub(1);
      respond(std::move(response));
    });
  } else {
    pending.emplace(std::move(respond));
  }
  std::optional<Response> response;
  try {
    response = Handler(filter_, options_, limiter_, metrics_, request, pending).Run();
  } catch (const std::exception& e) {
    // A bug or an allocation failure: never let it escape into the session.
    response = ErrorResponse(nbspamd::Error{ErrorCode::kInternal, e.what()}, version);
  }
  // Answered now, unless an endpoint passed `pending` on to SpamFilter, whose asynchronous calls
  // answer exactly once, also when they fail.
  if (pending && response) Deliver(*pending, version, [&] { return std::move(*response); });
}

Response Router::Handle(const Request& request) const {
  std::promise<Response> promise;
  std::future<Response> future = promise.get_future();
  HandleAsync(request, [&promise](Response response) { promise.set_value(std::move(response)); });
  return future.get();
}

}  // namespace nbspamd::http_api
