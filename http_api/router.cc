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

#include "common/json_text.h"
#include "common/log.h"
#include "common/version.h"
#include "core/readiness.h"
#include "model/classifier.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::size_t kMaxExplain = 1000;
constexpr std::size_t kMaxAdminLimit = 100000;

// A request whose parameters and body have been read: the raw message, or the fields of a JSON
// body, plus the query parameters.
struct Input {
  std::map<std::string, std::string, std::less<>> query;
  bool is_json = false;
  json::object fields;  // When is_json.
};

Response JsonResponse(const json::value& body, unsigned version) {
  Response response(http::status::ok, version);
  response.set(http::field::content_type, "application/json");
  response.body() = WriteJson(body);
  response.body() += '\n';
  response.prepare_payload();
  return response;
}

// A finite double, or null: JSON has no infinities.
json::value Number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

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

std::expected<std::size_t, Error> ParseExplain(std::string_view text) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > kMaxExplain) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "explain must be a whole number from 0 to " + std::to_string(kMaxExplain));
  }
  return value;
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

// Counts a training outcome for its source, and feedback when the message was classified
// before. Runs on the training writer's thread: quick, no I/O.
void RecordTraining(Metrics& metrics, core::VerdictMemory& verdicts, const std::string& source,
                    const std::expected<core::TrainOutcome, nbspamd::Error>& outcome) {
  if (!outcome) return metrics.RecordTraining(source, TrainingEvent::kFailed);
  if (outcome->queued) return;  // Not applied here yet: its outcome is not known.
  static constexpr TrainingEvent kEvents[] = {TrainingEvent::kLearned, TrainingEvent::kRelearned,
                                              TrainingEvent::kUnchanged};
  metrics.RecordTraining(source, kEvents[static_cast<int>(outcome->status)]);
  if (outcome->label != "spam" && outcome->label != "ham") return;
  const std::optional<bool> was_spam = verdicts.Take(outcome->id);
  if (!was_spam) return;
  const bool is_spam = outcome->label == "spam";
  metrics.RecordFeedback(*was_spam == is_spam ? Feedback::kAgreed
                         : *was_spam          ? Feedback::kFalsePositive
                                              : Feedback::kFalseNegative);
}

// Who may call an endpoint when bearer tokens are configured.
enum class Guard {
  kOpen,      // Anyone.
  kClassify,  // Anyone, unless auth_classify.
  kToken,     // A token holder.
};

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
          Metrics& metrics, core::VerdictMemory& verdicts, const Request& request,
          std::optional<Respond>& respond)
      : filter_(filter),
        options_(options),
        limiter_(limiter),
        metrics_(metrics),
        verdicts_(verdicts),
        request_(request),
        respond_(respond) {}

  std::optional<Response> Run() {
    auto url = boost::urls::parse_origin_form(request_.target());
    if (!url)
      return Error(http::status::bad_request, "bad_target",
                   "the request target is not a valid path");
    const std::string path(url->encoded_path());
    struct Route {
      const char* path;
      http::verb method;
      std::optional<Response> (Handler::*handle)(const Input&);
      bool takes_body;
      Guard guard;
      bool rate_limited;  // Counts against the source's training rate.
    };
    static constexpr Route kRoutes[] = {
        {"/classify", http::verb::post, &Handler::Classify, true, Guard::kClassify, false},
        {"/train", http::verb::post, &Handler::Train, true, Guard::kToken, true},
        {"/forget", http::verb::post, &Handler::Forget, true, Guard::kToken, true},
        {"/admin/backup", http::verb::post, &Handler::Backup, false, Guard::kToken, false},
        {"/admin/learned", http::verb::get, &Handler::Learned, false, Guard::kToken, false},
        {"/admin/rollback", http::verb::post, &Handler::Rollback, false, Guard::kToken, false},
        {"/stats", http::verb::get, &Handler::Stats, false, Guard::kOpen, false},
        {"/healthz", http::verb::get, &Handler::Health, false, Guard::kOpen, false},
        {"/readyz", http::verb::get, &Handler::Ready, false, Guard::kOpen, false},
        {"/metrics", http::verb::get, &Handler::MetricsText, false, Guard::kOpen, false},
    };
    for (const Route& route : kRoutes) {
      if (path != route.path) continue;
      if (request_.method() != route.method) {
        Response response =
            Error(http::status::method_not_allowed, "method_not_allowed",
                  std::string(path) + " takes " + std::string(http::to_string(route.method)));
        response.set(http::field::allow, http::to_string(route.method));
        return response;
      }
      const bool guarded = route.guard == Guard::kToken ||
                           (route.guard == Guard::kClassify && options_.auth_classify);
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
      if (route.rate_limited && !limiter_.Allow(source_, RateLimiter::Clock::now())) {
        Response response = Error(http::status::too_many_requests, "rate_limited",
                                  "this source trains faster than train_rate_limit allows");
        response.set(http::field::retry_after, "1");
        return response;
      }
      Input input;
      for (const auto& param : url->params()) {
        if (!input.query.emplace(param.key, param.value).second) {
          return Error(http::status::bad_request, "invalid_argument",
                       "query parameter '" + param.key + "' is given twice");
        }
      }
      if (route.takes_body) {
        if (!request_.has_content_length() && !request_.chunked()) {
          return Error(http::status::length_required, "length_required",
                       "a Content-Length header (or chunked encoding) is required");
        }
        const std::string type = MediaType(request_);
        if (type == "application/json") {
          input.is_json = true;
          boost::system::error_code ec;
          json::value body = json::parse(request_.body(), ec);
          if (ec)
            return Error(http::status::bad_request, "invalid_json",
                         "the body is not valid JSON: " + ec.message());
          if (!body.is_object())
            return Error(http::status::bad_request, "invalid_json",
                         "the JSON body must be an object");
          input.fields = std::move(body.as_object());
        } else if (!IsRawMessageType(type)) {
          return Error(http::status::unsupported_media_type, "unsupported_media_type",
                       "send the message as raw bytes (message/rfc822, text/plain, "
                       "application/octet-stream) or as application/json");
        }
      }
      return (this->*route.handle)(input);
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

  // Every query parameter and JSON field must be one the endpoint knows.
  std::optional<Response> RejectUnknown(const Input& input,
                                        std::initializer_list<std::string_view> query_keys,
                                        std::initializer_list<std::string_view> json_keys) const {
    for (const auto& [key, value] : input.query) {
      if (std::find(query_keys.begin(), query_keys.end(), key) == query_keys.end()) {
        return Error(http::status::bad_request, "invalid_argument",
                     "unknown query parameter '" + key + "'");
      }
    }
    for (const auto& field : input.fields) {
      if (std::find(json_keys.begin(), json_keys.end(), field.key()) == json_keys.end()) {
        return Error(http::status::bad_request, "invalid_argument",
                     "unknown JSON field '" + std::string(field.key()) + "'");
      }
    }
    return std::nullopt;
  }

  // A string parameter from the JSON body when there is one, else from the query.
  std::expected<std::optional<std::string_view>, nbspamd::Error> Parameter(
      const Input& input, std::string_view name) const {
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

  // The message: the raw body, or the JSON body's "text".
  std::expected<std::string_view, nbspamd::Error> Message(const Input& input) const {
    if (!input.is_json) return std::string_view(request_.body());
    const json::value* text = input.fields.if_contains("text");
    if (text == nullptr)
      return MakeError(ErrorCode::kInvalidArgument, "JSON field 'text' is missing");
    if (!text->is_string())
      return MakeError(ErrorCode::kInvalidArgument, "JSON field 'text' must be a string");
    return std::string_view(text->as_string());
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
    if (*id) {
      if (auto valid = core::SpamFilter::ValidateId(**id); !valid) return Error(valid.error());
    }
    auto message = Message(input);
    if (!message) return Error(message.error());
    auto outcome = filter_.Classify(*message, explain);
    if (!outcome) return Error(outcome.error());
    const model::ClassifyResult& result = outcome->result;
    metrics_.RecordVerdict(result.label_index);
    metrics_.RecordSpamVerdict(result.verdict);
    // Remembered under the id a later /train of the same message will have.
    if (result.SpamProbability()) {
      verdicts_.Remember(*id ? **id : core::SpamFilter::ContentId(*message),
                         result.verdict == model::Verdict::kSpam);
    }

    json::object body;
    body["label"] = result.label();
    body["verdict"] = model::VerdictName(result.verdict);
    body["probability"] = Number(result.SpamProbability());
    body["log_odds"] = Number(result.log_odds);
    body["score"] = Number(result.score);
    body["spam_confidence"] = Number(outcome->spam_confidence);
    json::object probabilities;
    for (const model::ClassScore& c : result.classes) probabilities[c.label] = c.probability;
    body["probabilities"] = std::move(probabilities);
    body["tokens"] = outcome->tokens;
    body["known_tokens"] = result.known_tokens;
    body["scored_tokens"] = result.scored_tokens;
    if (explain > 0) {
      json::array explanations;
      for (const model::TokenExplanation& e : result.explanations) {
        static constexpr const char* kSources[] = {"body", "header", "url", "meta"};
        explanations.push_back(json::object{{"token", e.token},
                                            {"source", kSources[static_cast<int>(e.source)]},
                                            {"count", e.count},
                                            {"weight", e.weight}});
      }
      body["explain"] = std::move(explanations);
    }
    return JsonResponse(body, request_.version());
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
    auto message = Message(input);
    if (!message) return Error(message.error());
    filter_.TrainAsync(
        *message, **label, *id, source_,
        [&metrics = metrics_, &verdicts = verdicts_, version = request_.version(), source = source_,
         respond =
             TakeRespond()](std::expected<core::TrainOutcome, nbspamd::Error> outcome) mutable {
          RecordTraining(metrics, verdicts, source, outcome);
          Deliver(respond, version, [&] {
            if (!outcome) return ErrorResponse(outcome.error(), version);
            json::object body{{"id", outcome->id},
                              {"label", outcome->label},
                              {"status", outcome->queued ? std::string_view("queued")
                                                         : model::LearnStatusName(outcome->status)},
                              {"tokens", outcome->tokens}};
            if (!outcome->stream_id.empty()) body["stream_id"] = outcome->stream_id;
            return JsonResponse(body, version);
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
      auto body = Message(input);
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
            json::object body{{"id", forgotten->id},
                              {"status", forgotten->queued ? "queued" : "forgotten"}};
            if (!forgotten->stream_id.empty()) body["stream_id"] = forgotten->stream_id;
            return JsonResponse(body, version);
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
    const auto stats = filter_.Stats();
    json::array classes;
    for (const model::ClassStats& c : stats->classes) {
      classes.push_back(
          json::object{{"label", c.label}, {"documents", c.documents}, {"tokens", c.tokens}});
    }
    const core::SpamFilterOptions& options = filter_.options();
    json::object tokenizer{{"boolean_counts", options.tokenizer.boolean_counts},
                           {"header_tokens", options.tokenizer.header_tokens},
                           {"word_bigrams", options.tokenizer.word_bigrams},
                           {"max_message_bytes", options.tokenizer.max_message_bytes},
                           {"max_tokens", options.tokenizer.max_tokens},
                           {"max_token_chars", options.tokenizer.max_token_chars}};
    return JsonResponse(json::object{{"classes", std::move(classes)},
                                     {"documents", stats->TotalDocuments()},
                                     {"vocabulary", stats->vocabulary_size},
                                     {"alpha", options.alpha},
                                     {"spam_threshold", options.spam_threshold},
                                     {"ham_threshold", options.ham_threshold},
                                     {"score_min_weight", options.score_min_weight},
                                     {"options", std::move(tokenizer)}},
                        request_.version());
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
    json::array messages;
    for (const storage::LearnedMessage& message : *listed) {
      messages.push_back(json::object{{"id", message.id},
                                      {"label", message.label},
                                      {"source", message.origin.source},
                                      {"learned_at", message.origin.learned_at}});
    }
    const std::size_t count = messages.size();
    return JsonResponse(json::object{{"messages", std::move(messages)}, {"count", count}},
                        request_.version());
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
  core::VerdictMemory& verdicts_;
  std::string source_;  // The bearer token's name; "" when none is needed.
  const Request& request_;
  std::optional<Respond>& respond_;  // Empty once an endpoint has taken it.
};

}  // namespace

void Router::HandleAsync(const Request& request, Respond respond) const {
  const unsigned version = request.version();
  // Admission: every request but /healthz counts until its response is handed over.
  const bool counted =
      !request.target().starts_with("/healthz") && !request.target().starts_with("/readyz");
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
    response = Handler(filter_, options_, limiter_, metrics_, verdicts_, request, pending).Run();
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
