// GET /stats, /healthz, /readyz and /metrics: what the daemon and its model look like now.
#include <array>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <vector>

#include "common/build_info.h"
#include "common/version.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"
#include "model/feedback_thresholds.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

}  // namespace

std::optional<Response> HandleStats(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  json::object body =
      StatsJson(*call.filter.Stats(), call.filter.options(), call.filter.ConfiguredThresholds());
  // The thresholds in force (spam_threshold and ham_threshold above are the configured ones),
  // and what the recent feedback gives (docs/API.md "GET /stats").
  const model::VerdictThresholds in_force = call.filter.Thresholds();
  const auto feedback = call.filter.FeedbackThresholds();
  body["verdict_thresholds"] =
      json::object{{"mode", call.filter.options().thresholds_from_feedback ? "feedback" : "fixed"},
                   {"spam", in_force.spam},
                   {"ham", in_force.ham},
                   {"feedback", json::object{{"spam", feedback->thresholds.spam},
                                             {"ham", feedback->thresholds.ham},
                                             {"spam_from_feedback", feedback->spam_from_feedback},
                                             {"ham_from_feedback", feedback->ham_from_feedback},
                                             {"hams", feedback->hams},
                                             {"spams", feedback->spams},
                                             {"window", model::kFeedbackWindow}}}};
  // The history's bounds (settings, alike on every daemon of a cluster); how many scans it holds
  // is this daemon's own, in /metrics (nbspamd_history_scans).
  if (const history::ScanHistory* history = call.filter.History()) {
    const history::ScanHistoryOptions& options = history->options();
    body["history"] = json::object{{"max_scans", options.max_scans},
                                   {"max_age_days", options.max_age_ms / 86'400'000}};
  }
  // The model expiry's settings (0: that part is off), also alike on every daemon.
  const core::ExpiryPolicy& expiry = call.options.expiry;
  body["expiry"] = json::object{{"ledger_retention_days", expiry.ledger_retention.count() / 86400},
                                {"token_expiry_days", expiry.token_age.count() / 86400},
                                {"token_expiry_max_count", expiry.token_max_count},
                                {"token_expiry_min_messages", expiry.token_min_messages},
                                {"token_keep_weight", expiry.keep_weight},
                                {"token_keep_ham", expiry.keep_ham},
                                {"token_cap", expiry.token_cap}};
  return JsonResponse(body, call.request.version());
}

std::optional<Response> HandleMetricsText(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  Response response(http::status::ok, call.request.version());
  response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  response.body() = call.metrics.Render(call.filter.Status(), kVersion);
  if (call.options.extra_metrics) response.body() += call.options.extra_metrics();
  response.prepare_payload();
  return response;
}

// Liveness: the daemon serves. `ready` says whether it does all of its work (see /readyz).
std::optional<Response> HandleHealth(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  const core::Readiness readiness = call.filter.CheckReadiness();
  // What runs and since when (the console's Status).
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  return JsonResponse(json::object{{"status", "ok"},
                                   {"ready", readiness.ready()},
                                   {"version", kVersion},
                                   {"build_type", kBuildType},
                                   {"compiler", kBuildCompiler},
                                   {"commit", kBuildCommit},
                                   {"started_ms", call.filter.StartedMs()},
                                   {"uptime_seconds", (now_ms - call.filter.StartedMs()) / 1000}},
                      call.request.version());
}

// Readiness: 200 {"status": "ready"}, or 503 {"status": "degraded", "degraded": [reasons]}.
std::optional<Response> HandleReady(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  const core::Readiness readiness = call.filter.CheckReadiness();
  if (readiness.ready()) {
    return JsonResponse(json::object{{"status", "ready"}}, call.request.version());
  }
  json::array reasons;
  for (const std::string& reason : readiness.degraded) reasons.emplace_back(reason);
  Response response =
      JsonResponse(json::object{{"status", "degraded"}, {"degraded", std::move(reasons)}},
                   call.request.version());
  response.result(http::status::service_unavailable);
  return response;
}

}  // namespace nbspamd::http_api
