// POST /classify, /train and /forget: a message in, the core's answer out as JSON. Each takes an
// optional user (?user= or the JSON field "user"): that user's layer (core/spam_filter.h).
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <charconv>
#include <expected>
#include <string>

#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::size_t kMaxExplain = 1000;

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
                                              TrainingEvent::kUnchanged, TrainingEvent::kChecked};
  metrics.RecordTraining(source, kEvents[static_cast<int>(outcome->status)]);
  if (outcome->feedback) metrics.RecordFeedback(*outcome->feedback);
}

// ?scan_id= (or the JSON field): a train or forget of what that scan classified, with no message.
// Errors: kInvalidArgument when it comes with an id or a message.
std::expected<std::optional<std::string_view>, Error> ScanIdOf(const Input& input,
                                                               std::optional<std::string_view> id) {
  auto scan_id = Parameter(input, "scan_id");
  if (!scan_id || !*scan_id) return scan_id;
  const bool has_message = input.is_json ? input.fields.contains("text") : !input.body.empty();
  if (id || has_message) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "give either ?scan_id= or a message (and its id), not both");
  }
  return scan_id;
}

}  // namespace

std::optional<Response> HandleClassify(Call& call, const Input& input) {
  if (auto rejected =
          call.RejectUnknown(input, {"explain", "id", "user"}, {"text", "explain", "id", "user"}))
    return *rejected;
  std::size_t explain = 0;
  if (const json::value* value = input.fields.if_contains("explain")) {
    if (!value->is_int64() && !value->is_uint64()) {
      return call.Error(http::status::bad_request, "invalid_argument",
                        "JSON field 'explain' must be a whole number");
    }
    auto parsed = ParseExplain(json::serialize(*value));
    if (!parsed) return call.Error(parsed.error());
    explain = *parsed;
  } else if (const auto it = input.query.find("explain"); it != input.query.end()) {
    auto parsed = ParseExplain(it->second);
    if (!parsed) return call.Error(parsed.error());
    explain = *parsed;
  }
  auto id = Parameter(input, "id");
  if (!id) return call.Error(id.error());
  auto message = MessageOf(input);
  if (!message) return call.Error(message.error());
  auto user = Parameter(input, "user");
  if (!user) return call.Error(user.error());
  auto outcome = call.filter.Classify(
      {.message = *message, .explain = explain, .id = *id, .user = *user, .front_end = "http"});
  if (!outcome) return call.Error(outcome.error());
  call.metrics.RecordVerdict(outcome->result.label_index);
  call.metrics.RecordSpamVerdict(outcome->result.verdict);
  return JsonResponse(ClassifyJson(*outcome, explain), call.request.version());
}

std::optional<Response> HandleTrain(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"label", "id", "user", "scan_id", "count"},
                                         {"text", "label", "id", "user", "scan_id", "count"}))
    return *rejected;
  auto label = Parameter(input, "label");
  if (!label) return call.Error(label.error());
  if (!*label)
    return call.Error(http::status::bad_request, "invalid_argument",
                      "the label is missing: give ?label=spam or ?label=ham");
  auto id = Parameter(input, "id");
  if (!id) return call.Error(id.error());
  auto user = Parameter(input, "user");
  if (!user) return call.Error(user.error());
  auto scan_id = ScanIdOf(input, *id);
  if (!scan_id) return call.Error(scan_id.error());
  // count=all: counted whatever the training regime (a bulk import); nothing else is valid.
  auto count = Parameter(input, "count");
  if (!count) return call.Error(count.error());
  if (*count && **count != "all") {
    return call.Error(http::status::bad_request, "invalid_argument",
                      "count must be \"all\" (count the message whatever the training regime), "
                      "or left out");
  }
  const bool count_all = count->has_value();
  core::TrainDone done = [&metrics = call.metrics, version = call.request.version(),
                          source = call.source, respond = call.TakeRespond()](
                             std::expected<core::TrainOutcome, nbspamd::Error> outcome) mutable {
    RecordTraining(metrics, source, outcome);
    Deliver(respond, version, [&] {
      if (!outcome) return ErrorResponse(outcome.error(), version);
      return JsonResponse(TrainJson(*outcome), version);
    });
  };
  if (*scan_id) {
    call.filter.TrainScanAsync({.scan_id = **scan_id,
                                .label = **label,
                                .source = call.source,
                                .user = *user,
                                .count_all = count_all},
                               std::move(done));
    return std::nullopt;
  }
  auto message = MessageOf(input);
  if (!message) {
    done(std::unexpected(std::move(message.error())));
    return std::nullopt;
  }
  call.filter.TrainAsync({.message = *message,
                          .label = **label,
                          .id = *id,
                          .source = call.source,
                          .user = *user,
                          .count_all = count_all},
                         std::move(done));
  return std::nullopt;
}

std::optional<Response> HandleForget(Call& call, const Input& input) {
  if (auto rejected =
          call.RejectUnknown(input, {"id", "user", "scan_id"}, {"text", "id", "user", "scan_id"}))
    return *rejected;
  auto id = Parameter(input, "id");
  if (!id) return call.Error(id.error());
  auto user = Parameter(input, "user");
  if (!user) return call.Error(user.error());
  auto scan_id = ScanIdOf(input, *id);
  if (!scan_id) return call.Error(scan_id.error());
  std::optional<std::string_view> message;
  if (!*id && !*scan_id) {
    auto body = MessageOf(input);
    if (!body) return call.Error(body.error());
    if (body->empty()) {
      return call.Error(http::status::bad_request, "invalid_argument",
                        "give ?id= or the message to forget");
    }
    message = *body;
  }
  core::ForgetDone done =
      [&metrics = call.metrics, version = call.request.version(), source = call.source,
       respond = call.TakeRespond()](
          std::expected<core::ForgetOutcome, nbspamd::Error> forgotten) mutable {
        if (!forgotten || !forgotten->queued) {
          metrics.RecordTraining(source,
                                 forgotten ? TrainingEvent::kForgotten : TrainingEvent::kFailed);
        }
        Deliver(respond, version, [&] {
          if (!forgotten) return ErrorResponse(forgotten.error(), version);
          return JsonResponse(ForgetJson(*forgotten), version);
        });
      };
  if (*scan_id) {
    call.filter.ForgetScanAsync({.scan_id = **scan_id, .source = call.source, .user = *user},
                                std::move(done));
  } else if (message) {
    call.filter.ForgetAsync({.message = *message, .source = call.source, .user = *user},
                            std::move(done));
  } else {
    call.filter.ForgetAsync({.id = **id, .source = call.source, .user = *user}, std::move(done));
  }
  return std::nullopt;
}

}  // namespace nbspamd::http_api
