// GET /ui/... (the console's files), GET /activity (the last hour, minute by minute) and
// GET /calibration (the held-out score histogram and the fitted spam_confidence curve): what the
// console shows beyond the rest of the API.
#include <algorithm>
#include <array>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <string>
#include <string_view>

#include "console/files.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"
#include "model/calibration.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

// The console's files load only from the daemon itself, run no inline script or style, and are
// never framed: a value from mail that slipped past the page's escaping still runs nothing.
constexpr std::string_view kConsolePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

json::object RowJson(const core::ActivityRow& row) {
  return json::object{{"start_ms", row.start_ms},
                      {"spam", row.spam},
                      {"ham", row.ham},
                      {"unsure", row.unsure},
                      {"unscored", row.unscored},
                      {"trained", row.trained},
                      {"train_rejected", row.train_rejected},
                      {"train_failed", row.train_failed},
                      {"classify_p50_ms", row.classify_p50_ms},
                      {"classify_p99_ms", row.classify_p99_ms},
                      {"train_p50_ms", row.train_p50_ms},
                      {"train_p99_ms", row.train_p99_ms}};
}

json::object ClusterJson(const core::ClusterStatus& cluster) {
  json::array peers;
  for (const core::ClusterPeer& peer : cluster.peers) {
    peers.emplace_back(json::object{{"name", peer.name},
                                    {"position", peer.position},
                                    {"lag_seconds", peer.lag_seconds},
                                    {"seen_seconds_ago", peer.seen_seconds_ago}});
  }
  return json::object{{"connected", cluster.connected},     {"stopped_by_gap", cluster.gap},
                      {"applied", cluster.applied},         {"last", cluster.last},
                      {"lag_seconds", cluster.lag_seconds}, {"daemons", std::move(peers)}};
}

}  // namespace

std::optional<Response> HandleConsole(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  const std::string_view target = call.request.target();
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/ui") {
    Response response(http::status::moved_permanently, call.request.version());
    response.set(http::field::location, "/ui/");
    response.prepare_payload();
    return response;
  }
  const console::ConsoleFile* file = console::FindConsoleFile(path.substr(4));  // After "/ui/".
  if (file == nullptr) {
    return call.Error(http::status::not_found, "not_found",
                      "the console has no file " + std::string(path));
  }
  Response response(http::status::ok, call.request.version());
  response.set(http::field::content_type, file->content_type);
  response.set("Content-Security-Policy", kConsolePolicy);
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
  response.set(http::field::cache_control, "no-cache");
  response.body() = file->body;
  response.prepare_payload();
  return response;
}

std::optional<Response> HandleActivity(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"range"}, {})) return *rejected;
  constexpr std::array<std::string_view, core::kActivityRangeCount> kRangeNames = {"hour", "day",
                                                                                   "month"};
  core::ActivityRange range = core::ActivityRange::kHour;
  if (const auto given = input.query.find("range"); given != input.query.end()) {
    const auto named = std::ranges::find(kRangeNames, given->second);
    if (named == kRangeNames.end()) {
      return call.Error(http::status::bad_request, "invalid_argument",
                        "range must be hour, day or month");
    }
    range = static_cast<core::ActivityRange>(named - kRangeNames.begin());
  }
  json::array rows;
  for (const core::ActivityRow& row : call.filter.Activity().Rows(range)) {
    rows.emplace_back(RowJson(row));
  }
  const auto index = static_cast<std::size_t>(range);
  json::object body{{"range", kRangeNames[index]},
                    {"step_seconds", core::kActivityRanges[index].step_ms / 1000}};
  // The hour's rows keep the name they had when the hour was the only range.
  if (range == core::ActivityRange::kHour) body["minutes"] = rows;
  body["rows"] = std::move(rows);
  if (auto cluster = call.filter.Cluster()) body["cluster"] = ClusterJson(*cluster);
  return JsonResponse(body, call.request.version());
}

std::optional<Response> HandleCalibration(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  const auto calibration = call.filter.Calibration();
  const model::FeedbackHistogram& histogram = calibration->histogram();
  const double width =
      (histogram.layout.high - histogram.layout.low) / static_cast<double>(histogram.layout.bins);
  json::array bins;
  for (std::uint32_t b = 0; b < histogram.layout.bins; ++b) {
    const double low = histogram.layout.low + width * b;
    bins.emplace_back(json::object{{"low", low},
                                   {"high", low + width},
                                   {"spam", histogram.spam[b]},
                                   {"ham", histogram.ham[b]},
                                   {"fitted", calibration->fitted()[b]}});
  }
  return JsonResponse(json::object{{"ready", calibration->ready()},
                                   {"spam", histogram.SpamTotal()},
                                   {"ham", histogram.HamTotal()},
                                   // Held-out scores of each class needed before it is fitted.
                                   {"min_per_class", model::kMinFeedbackPerClass},
                                   {"bins", std::move(bins)}},
                      call.request.version());
}

}  // namespace nbspamd::http_api
