#include "server/router.h"

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>
#include <cmath>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "model/classifier.h"

namespace nbspamd::server {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::size_t kMaxExplain = 1000;

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
  response.body() = json::serialize(body);
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

// Answers one request. An endpoint returns its response, or nullopt when it has passed
// `respond_` on to the training writer, which answers later.
class Handler {
 public:
  Handler(SpamFilter& filter, const Request& request, std::optional<Respond>& respond)
      : filter_(filter), request_(request), respond_(respond) {}

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
    };
    static constexpr Route kRoutes[] = {
        {"/classify", http::verb::post, &Handler::Classify, true},
        {"/train", http::verb::post, &Handler::Train, true},
        {"/forget", http::verb::post, &Handler::Forget, true},
        {"/stats", http::verb::get, &Handler::Stats, false},
        {"/healthz", http::verb::get, &Handler::Health, false},
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
    if (auto rejected = RejectUnknown(input, {"explain"}, {"text", "explain"})) return *rejected;
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
    auto message = Message(input);
    if (!message) return Error(message.error());
    auto outcome = filter_.Classify(*message, explain);
    if (!outcome) return Error(outcome.error());
    const model::ClassifyResult& result = outcome->result;

    json::object body;
    body["label"] = result.label();
    body["probability"] = Number(result.SpamProbability());
    body["log_odds"] = Number(result.log_odds);
    body["score"] = Number(result.score);
    json::object probabilities;
    for (const model::ClassScore& c : result.classes) probabilities[c.label] = c.probability;
    body["probabilities"] = std::move(probabilities);
    body["tokens"] = outcome->tokens;
    body["known_tokens"] = result.known_tokens;
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
        *message, **label, *id,
        [version = request_.version(),
         respond = TakeRespond()](std::expected<TrainOutcome, nbspamd::Error> outcome) mutable {
          Deliver(respond, version, [&] {
            if (!outcome) return ErrorResponse(outcome.error(), version);
            return JsonResponse(json::object{{"id", outcome->id},
                                             {"label", outcome->label},
                                             {"status", model::LearnStatusName(outcome->status)},
                                             {"tokens", outcome->tokens}},
                                version);
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
    ForgetDone done = [version = request_.version(), respond = TakeRespond()](
                          std::expected<std::string, nbspamd::Error> forgotten) mutable {
      Deliver(respond, version, [&] {
        if (!forgotten) return ErrorResponse(forgotten.error(), version);
        return JsonResponse(json::object{{"id", *forgotten}, {"status", "forgotten"}}, version);
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
    const SpamFilterOptions& options = filter_.options();
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
                                     {"options", std::move(tokenizer)}},
                        request_.version());
  }

  std::optional<Response> Health(const Input& input) {
    if (auto rejected = RejectUnknown(input, {}, {})) return *rejected;
    return JsonResponse(json::object{{"status", "ok"}}, request_.version());
  }

  // The caller's Respond, for an endpoint that answers later.
  Respond TakeRespond() { return *std::exchange(respond_, std::nullopt); }

  SpamFilter& filter_;
  const Request& request_;
  std::optional<Respond>& respond_;  // Empty once an endpoint has taken it.
};

}  // namespace

void Router::HandleAsync(const Request& request, Respond respond) const {
  std::optional<Respond> pending(std::move(respond));
  const unsigned version = request.version();
  std::optional<Response> response;
  try {
    response = Handler(filter_, request, pending).Run();
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

}  // namespace nbspamd::server
