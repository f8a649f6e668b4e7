#include "http_api/metrics.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "common/prometheus_text.h"

namespace nbspamd::http_api {
namespace {

constexpr std::string_view kTrainingEventNames[] = {"learned", "relearned", "unchanged",
                                                    "checked", "forgotten", "failed"};
constexpr std::string_view kFeedbackNames[] = {"agreed", "false_positive", "false_negative"};
constexpr std::string_view kOtherStatuses[] = {"2xx", "4xx", "5xx"};

// A bucket bound as people write it ("0.0005", not "5e-04").
std::string Bound(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

Metrics::Metrics(std::vector<std::string> sources) {
  sources_.push_back("");
  for (std::string& source : sources) {
    if (std::ranges::find(sources_, source) == sources_.end())
      sources_.push_back(std::move(source));
  }
  sources_.push_back("other");
  training_ = std::make_unique<std::array<Counter, kTrainingEvents>[]>(sources_.size());
}

void Metrics::RecordResponse(Endpoint endpoint, unsigned status,
                             std::chrono::microseconds latency) {
  EndpointCounters& counters = endpoints_[static_cast<std::size_t>(endpoint)];
  std::size_t slot = kStatuses.size();
  for (std::size_t i = 0; i < kStatuses.size(); ++i) {
    if (kStatuses[i] == status && status != 0) {
      slot = i;
      break;
    }
  }
  if (slot == kStatuses.size()) {
    slot += status < 300 ? 0 : status < 500 ? 1 : 2;
  }
  counters.by_status[slot].fetch_add(1, std::memory_order_relaxed);
  const double seconds = static_cast<double>(latency.count()) / 1e6;
  for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) {
      counters.latency_buckets[i].fetch_add(1, std::memory_order_relaxed);
      break;  // Buckets are rendered cumulatively.
    }
  }
  counters.latency_count.fetch_add(1, std::memory_order_relaxed);
  counters.latency_sum_microseconds.fetch_add(static_cast<std::uint64_t>(latency.count()),
                                              std::memory_order_relaxed);
}

void Metrics::RecordVerdict(std::size_t class_index) {
  verdicts_[std::min(class_index, kClassSlots - 1)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::RecordSpamVerdict(model::Verdict verdict) {
  spam_verdicts_[static_cast<std::size_t>(verdict)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::RecordTraining(std::string_view source, TrainingEvent event) {
  const auto it = std::find(sources_.begin(), sources_.end() - 1, source);
  const std::size_t row = static_cast<std::size_t>(it - sources_.begin());
  training_[row][static_cast<std::size_t>(event)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::RecordFeedback(core::Feedback feedback) {
  feedback_[static_cast<std::size_t>(feedback)].fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::RenderCounters(const model::ModelStats& stats,
                                    std::span<const storage::StorageProperty> storage,
                                    std::string_view version) const {
  std::string out;
  out.reserve(16 << 10);
  const auto load = [](const Counter& counter) {
    return static_cast<double>(counter.load(std::memory_order_relaxed));
  };

  AppendMetricHeader(out, "nbspamd_build_info", "gauge", "The daemon's version.");
  AppendSample(out, "nbspamd_build_info", "version=" + PrometheusLabelValue(version), 1);
  AppendMetricHeader(out, "nbspamd_uptime_seconds", "gauge", "Seconds since the daemon started.");
  AppendSample(out, "nbspamd_uptime_seconds", "",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());

  AppendMetricHeader(out, "nbspamd_http_connections", "gauge", "Open HTTP connections.");
  AppendSample(out, "nbspamd_http_connections", "",
               static_cast<double>(http_connections_.open.load(std::memory_order_relaxed)));
  AppendMetricHeader(out, "nbspamd_http_read_buffer_bytes", "gauge",
                     "Bytes the open HTTP connections hold for reading requests.");
  AppendSample(
      out, "nbspamd_http_read_buffer_bytes", "",
      static_cast<double>(http_connections_.read_buffer_bytes.load(std::memory_order_relaxed)));
  AppendMetricHeader(out, "nbspamd_http_body_bytes_in_flight", "gauge",
                     "Declared bytes of the request bodies admitted and not yet answered.");
  AppendSample(
      out, "nbspamd_http_body_bytes_in_flight", "",
      static_cast<double>(http_connections_.body_bytes_in_flight.load(std::memory_order_relaxed)));

  AppendMetricHeader(out, "nbspamd_http_requests_total", "counter",
                     "HTTP responses by endpoint and status.");
  for (std::size_t e = 0; e < kEndpointCount; ++e) {
    const EndpointCounters& counters = endpoints_[e];
    const std::string endpoint =
        "endpoint=" + PrometheusLabelValue(EndpointName(static_cast<Endpoint>(e)));
    for (std::size_t s = 0; s < counters.by_status.size(); ++s) {
      const double count = load(counters.by_status[s]);
      if (count == 0) continue;
      const std::string status = s < kStatuses.size()
                                     ? std::to_string(kStatuses[s])
                                     : std::string(kOtherStatuses[s - kStatuses.size()]);
      AppendSample(out, "nbspamd_http_requests_total",
                   endpoint + ",status=" + PrometheusLabelValue(status), count);
    }
  }
  AppendMetricHeader(out, "nbspamd_http_request_duration_seconds", "histogram",
                     "Time from a request's header to its response, by endpoint.");
  for (std::size_t e = 0; e < kEndpointCount; ++e) {
    const EndpointCounters& counters = endpoints_[e];
    const double count = load(counters.latency_count);
    if (count == 0) continue;
    const std::string endpoint =
        "endpoint=" + PrometheusLabelValue(EndpointName(static_cast<Endpoint>(e)));
    double cumulative = 0;
    for (std::size_t b = 0; b < kLatencyBuckets.size(); ++b) {
      cumulative += load(counters.latency_buckets[b]);
      AppendSample(out, "nbspamd_http_request_duration_seconds_bucket",
                   endpoint + ",le=" + PrometheusLabelValue(Bound(kLatencyBuckets[b])), cumulative);
    }
    AppendSample(out, "nbspamd_http_request_duration_seconds_bucket", endpoint + ",le=\"+Inf\"",
                 count);
    AppendSample(out, "nbspamd_http_request_duration_seconds_sum", endpoint,
                 load(counters.latency_sum_microseconds) / 1e6);
    AppendSample(out, "nbspamd_http_request_duration_seconds_count", endpoint, count);
  }

  AppendMetricHeader(out, "nbspamd_verdicts_total", "counter", "/classify verdicts by class.");
  for (std::size_t c = 0; c < kClassSlots; ++c) {
    const double count = load(verdicts_[c]);
    if (count == 0 && c >= stats.classes.size()) continue;
    const std::string label = c + 1 == kClassSlots       ? std::string("other")
                              : c < stats.classes.size() ? stats.classes[c].label
                                                         : "class-" + std::to_string(c);
    AppendSample(out, "nbspamd_verdicts_total", "class=" + PrometheusLabelValue(label), count);
  }

  AppendMetricHeader(
      out, "nbspamd_spam_verdicts_total", "counter",
      "/classify three-way verdicts: spam (score above spam_threshold), unsure (between the "
      "thresholds, or no score yet), ham (score at most ham_threshold).");
  for (const model::Verdict verdict :
       {model::Verdict::kSpam, model::Verdict::kUnsure, model::Verdict::kHam}) {
    AppendSample(out, "nbspamd_spam_verdicts_total",
                 "verdict=" + PrometheusLabelValue(model::VerdictName(verdict)),
                 load(spam_verdicts_[static_cast<std::size_t>(verdict)]));
  }

  AppendMetricHeader(
      out, "nbspamd_training_total", "counter",
      "Training requests by source (bearer token name; \"\" without tokens) and outcome.");
  for (std::size_t row = 0; row < sources_.size(); ++row) {
    for (std::size_t event = 0; event < kTrainingEvents; ++event) {
      const double count = load(training_[row][event]);
      if (count == 0) continue;
      AppendSample(out, "nbspamd_training_total",
                   "source=" + PrometheusLabelValue(sources_[row]) +
                       ",outcome=" + PrometheusLabelValue(kTrainingEventNames[event]),
                   count);
    }
  }
  AppendMetricHeader(
      out, "nbspamd_feedback_total", "counter",
      "Trains of messages classified before: whether the label agreed with the verdict, or "
      "the verdict was a false positive (spam for ham) or a false negative (ham for spam).");
  for (std::size_t f = 0; f < feedback_.size(); ++f) {
    AppendSample(out, "nbspamd_feedback_total", "kind=" + PrometheusLabelValue(kFeedbackNames[f]),
                 load(feedback_[f]));
  }

  AppendMetricHeader(out, "nbspamd_model_documents", "gauge", "Documents learned, by class (N_c).");
  for (const model::ClassStats& c : stats.classes) {
    AppendSample(out, "nbspamd_model_documents", "class=" + PrometheusLabelValue(c.label),
                 static_cast<double>(c.documents));
  }
  AppendMetricHeader(out, "nbspamd_model_tokens", "gauge",
                     "Token occurrences learned, by class (n_c).");
  for (const model::ClassStats& c : stats.classes) {
    AppendSample(out, "nbspamd_model_tokens", "class=" + PrometheusLabelValue(c.label),
                 static_cast<double>(c.tokens));
  }
  AppendMetricHeader(out, "nbspamd_model_vocabulary", "gauge",
                     "Distinct tokens in the model (|V|).");
  AppendSample(out, "nbspamd_model_vocabulary", "", static_cast<double>(stats.vocabulary_size));

  for (const storage::StorageProperty& property : storage) {
    AppendMetricHeader(out, property.name, "gauge", property.help);
    AppendSample(out, property.name, "", property.value);
  }
  return out;
}

}  // namespace nbspamd::http_api

namespace nbspamd::http_api {

std::string_view InternalErrorName(InternalError where) {
  switch (where) {
    case InternalError::kHttpConnection:
      return "http_session";
    case InternalError::kIoThread:
      return "io_thread";
    case InternalError::kTrainingCompletion:
      return "training_completion";
    case InternalError::kClusterCompletion:
      return "cluster_completion";
    case InternalError::kClusterReport:
      return "cluster_report";
    case InternalError::kBackgroundTask:
      return "background_task";
    case InternalError::kHistoryWriter:
      return "history_writer";
    case InternalError::kTrainingWriter:
      return "training_writer";
  }
  return "unknown";
}

namespace {

std::string RenderCalibrationMetrics(const model::Calibration& calibration) {
  std::string out;
  const model::FeedbackHistogram& histogram = calibration.histogram();
  AppendMetricHeader(
      out, "nbspamd_calibration_feedback", "gauge",
      "Held-out scores (each learned message's score just before it was learned) of the "
      "newest 20,000 ledger records, which calibrate spam_confidence, by the message's class.");
  AppendSample(out, "nbspamd_calibration_feedback", "class=\"spam\"",
               static_cast<double>(histogram.SpamTotal()));
  AppendSample(out, "nbspamd_calibration_feedback", "class=\"ham\"",
               static_cast<double>(histogram.HamTotal()));
  AppendMetricHeader(out, "nbspamd_calibration_ready", "gauge",
                     "1 once there is enough feedback of both classes for spam_confidence.");
  AppendSample(out, "nbspamd_calibration_ready", "", calibration.ready() ? 1 : 0);
  return out;
}

std::string RenderThresholdMetrics(const model::VerdictThresholds& thresholds) {
  std::string out;
  AppendMetricHeader(out, "nbspamd_verdict_threshold", "gauge",
                     "The verdict thresholds in force (verdict_thresholds: fixed as set, or "
                     "narrowed by the recent feedback): spam above kind=spam, ham at or below "
                     "kind=ham.");
  AppendSample(out, "nbspamd_verdict_threshold", "kind=\"spam\"", thresholds.spam);
  AppendSample(out, "nbspamd_verdict_threshold", "kind=\"ham\"", thresholds.ham);
  return out;
}

std::string RenderStoreHealthMetrics(const storage::WriteHealth& health) {
  std::string out;
  AppendMetricHeader(
      out, "nbspamd_store_writable", "gauge",
      "1 while the model store takes writes; 0 after a fault of the machine stopped them "
      "(training answers 507 or 503, classify goes on).");
  AppendSample(out, "nbspamd_store_writable", "", health.writable ? 1 : 0);
  AppendMetricHeader(
      out, "nbspamd_store_write_errors_total", "counter",
      "Writes that failed with a fault of the machine, by kind; each stopped writes.");
  for (std::size_t i = 0; i < storage::kWriteFaultCount; ++i) {
    AppendSample(out, "nbspamd_store_write_errors_total",
                 "kind=" + PrometheusLabelValue(
                               storage::WriteFaultName(static_cast<storage::WriteFault>(i))),
                 static_cast<double>(health.errors[i]));
  }
  AppendMetricHeader(out, "nbspamd_store_recoveries_total", "counter",
                     "Times writes resumed by themselves after a fault.");
  AppendSample(out, "nbspamd_store_recoveries_total", "", static_cast<double>(health.recoveries));
  return out;
}

std::string RenderInternalErrorMetrics(
    const std::array<std::uint64_t, kInternalErrorCount>& counts) {
  std::string out;
  AppendMetricHeader(
      out, "nbspamd_internal_errors_total", "counter",
      "Failures no client was told of (a handler or completion that threw, a cluster report "
      "or trim read that failed), by where; each is logged, at most a line a minute.");
  for (std::size_t i = 0; i < kInternalErrorCount; ++i) {
    AppendSample(out, "nbspamd_internal_errors_total",
                 "where=" + PrometheusLabelValue(InternalErrorName(static_cast<InternalError>(i))),
                 static_cast<double>(counts[i]));
  }
  return out;
}

std::string RenderClusterMetrics(const core::ClusterStatus& status) {
  std::string out;
  AppendMetricHeader(out, "nbspamd_cluster_connected", "gauge",
                     "1 while the training stream is being read.");
  AppendSample(out, "nbspamd_cluster_connected", "", status.connected ? 1 : 0);
  AppendMetricHeader(
      out, "nbspamd_cluster_stopped_by_gap", "gauge",
      "1 when the stream was trimmed past this daemon's model and it stopped following it.");
  AppendSample(out, "nbspamd_cluster_stopped_by_gap", "", status.gap ? 1 : 0);
  AppendMetricHeader(out, "nbspamd_cluster_stream_behind", "gauge",
                     "1 when the stream lost entries this daemon applied (it ends before, or "
                     "lacks, this daemon's position) and it stopped applying it.");
  AppendSample(out, "nbspamd_cluster_stream_behind", "", status.stream_behind ? 1 : 0);
  AppendMetricHeader(out, "nbspamd_cluster_reading_replica", "gauge",
                     "1 while the training stream is read from a replica of the primary "
                     "(cluster_read_from replica), 0 while from the primary.");
  AppendSample(out, "nbspamd_cluster_reading_replica", "", status.reading_replica ? 1 : 0);
  AppendMetricHeader(out, "nbspamd_cluster_replica_wait_failures_total", "counter",
                     "Trains answered 503 because WAIT found fewer than cluster_min_replicas "
                     "replicas holding their event in time.");
  AppendSample(out, "nbspamd_cluster_replica_wait_failures_total", "",
               static_cast<double>(status.replica_wait_failures));
  AppendMetricHeader(
      out, "nbspamd_cluster_applied_position_info", "gauge",
      "The training stream entry applied last here, and the stream's last entry seen.");
  AppendSample(out, "nbspamd_cluster_applied_position_info",
               "applied=" + PrometheusLabelValue(status.applied) +
                   ",last=" + PrometheusLabelValue(status.last),
               1);
  AppendMetricHeader(out, "nbspamd_cluster_applied_position_milliseconds", "gauge",
                     "The time part of the stream entry id applied last here (Unix milliseconds).");
  AppendSample(out, "nbspamd_cluster_applied_position_milliseconds", "",
               static_cast<double>(status.applied_ms));
  AppendMetricHeader(out, "nbspamd_cluster_applied_events_total", "counter",
                     "Training stream entries applied since the daemon started.");
  AppendSample(out, "nbspamd_cluster_applied_events_total", "",
               static_cast<double>(status.applied_events));
  AppendMetricHeader(
      out, "nbspamd_cluster_lag_seconds", "gauge",
      "How far the entry applied here is behind the stream's last entry, by their timestamps.");
  AppendSample(out, "nbspamd_cluster_lag_seconds", "", status.lag_seconds);
  AppendMetricHeader(out, "nbspamd_cluster_waiting_requests", "gauge",
                     "Training requests waiting for their stream entry to be applied here.");
  AppendSample(out, "nbspamd_cluster_waiting_requests", "", static_cast<double>(status.waiting));
  AppendMetricHeader(
      out, "nbspamd_cluster_daemon_lag_seconds", "gauge",
      "Each daemon's lag behind the stream's last entry, as it last reported its position.");
  for (const core::ClusterPeer& peer : status.peers) {
    AppendSample(out, "nbspamd_cluster_daemon_lag_seconds",
                 "daemon=" + PrometheusLabelValue(peer.name), peer.lag_seconds);
  }
  AppendMetricHeader(out, "nbspamd_cluster_daemon_seen_seconds", "gauge",
                     "Seconds since each daemon last reported its position.");
  for (const core::ClusterPeer& peer : status.peers) {
    AppendSample(out, "nbspamd_cluster_daemon_seen_seconds",
                 "daemon=" + PrometheusLabelValue(peer.name), peer.seen_seconds_ago);
  }
  return out;
}

}  // namespace

std::string Metrics::Render(const core::ServiceStatus& status, std::string_view version) const {
  std::string out = RenderCounters(*status.model, status.storage, version);
  out += RenderCalibrationMetrics(*status.calibration);
  out += RenderThresholdMetrics(status.thresholds);
  out += RenderStoreHealthMetrics(status.store_health);
  std::array<std::uint64_t, kInternalErrorCount> internal{};
  for (const InternalError where : {InternalError::kHttpConnection, InternalError::kIoThread}) {
    internal[static_cast<std::size_t>(where)] = HandlerExceptionCount(where);
  }
  internal[static_cast<std::size_t>(InternalError::kTrainingCompletion)] =
      status.training_completion_exceptions;
  internal[static_cast<std::size_t>(InternalError::kBackgroundTask)] =
      status.background_task_exceptions;
  internal[static_cast<std::size_t>(InternalError::kTrainingWriter)] =
      status.training_writer_exceptions;
  if (status.history) {
    internal[static_cast<std::size_t>(InternalError::kHistoryWriter)] =
        status.history->writer_exceptions;
  }
  if (status.replication) {
    internal[static_cast<std::size_t>(InternalError::kClusterCompletion)] =
        status.replication->completion_exceptions;
    internal[static_cast<std::size_t>(InternalError::kClusterReport)] =
        status.replication->report_errors;
  }
  out += RenderInternalErrorMetrics(internal);
  if (status.replication) out += RenderClusterMetrics(*status.replication);
  if (status.history) {
    const history::ScanHistoryFigures& h = *status.history;
    AppendCounter(out, "nbspamd_history_scans_total",
                  "Scans the scan history wrote, dropped (its queue full or a write failed) and "
                  "removed by its bounds.",
                  "outcome=\"recorded\"", h.recorded);
    AppendCounter(out, "nbspamd_history_scans_total", "", "outcome=\"dropped\"", h.dropped);
    AppendCounter(out, "nbspamd_history_scans_total", "", "outcome=\"expired\"", h.expired);
    AppendCounter(out, "nbspamd_history_write_errors_total",
                  "Writes of the scan history that failed.", "", h.write_errors);
    AppendMetricHeader(out, "nbspamd_history_scans", "gauge", "Scans in the scan history.");
    AppendSample(out, "nbspamd_history_scans", "", static_cast<double>(h.kept));
  }
  const core::ExpiryFigures& expiry = status.expiry;
  AppendCounter(out, "nbspamd_ledger_retired_total",
                "Ledger records the ledger retention retired into the base counts since start.", "",
                expiry.retired_records);
  AppendCounter(out, "nbspamd_expiry_tokens_dropped_total",
                "Tokens the token expiry dropped since start (rare and old, or over the cap).", "",
                expiry.dropped_tokens);
  AppendCounter(out, "nbspamd_user_ledger_retired_total",
                "User ledger records the ledger retention retired into the users' base counts "
                "since start.",
                "", expiry.retired_user_records);
  AppendCounter(out, "nbspamd_user_expiry_tokens_dropped_total",
                "Tokens the token expiry dropped from user layers since start (rare and old).", "",
                expiry.dropped_user_tokens);
  AppendCounter(out, "nbspamd_expiry_passes_total",
                "Passes of the model expiry (ledger retention, token expiry, cap) since start.", "",
                expiry.passes);
  AppendMetricHeader(out, "nbspamd_expiry_last_pass_timestamp_seconds", "gauge",
                     "When the last pass of the model expiry ended (Unix time; 0: none yet).");
  AppendSample(out, "nbspamd_expiry_last_pass_timestamp_seconds", "",
               static_cast<double>(expiry.last_pass_end));
  AppendMetricHeader(out, "nbspamd_expiry_last_pass_duration_seconds", "gauge",
                     "How long the last pass of the model expiry took.");
  AppendSample(out, "nbspamd_expiry_last_pass_duration_seconds", "", expiry.last_pass_seconds);
  AppendMetricHeader(out, "nbspamd_expiry_cap_met", "gauge",
                     "1 when the last pass brought the distinct tokens down to token_cap (or "
                     "there is no cap), 0 when ledger records still held too many.");
  AppendSample(out, "nbspamd_expiry_cap_met", "", expiry.cap_met ? 1.0 : 0.0);
  AppendMetricHeader(out, "nbspamd_expiry_age_rule_waiting", "gauge",
                     "1 when the last pass's age rule dropped nothing because fewer than "
                     "token_expiry_min_messages messages were learned since the oldest it knows.");
  AppendSample(out, "nbspamd_expiry_age_rule_waiting", "", expiry.age_rule_waiting ? 1.0 : 0.0);
  if (status.autolearn) {
    const core::AutolearnFigures& a = *status.autolearn;
    AppendCounter(out, "nbspamd_autolearn_total",
                  "Messages the daemon learned by itself from confident verdicts, by class "
                  "(manual learns: nbspamd_training_total).",
                  "class=\"spam\"", a.learned_spam);
    AppendCounter(out, "nbspamd_autolearn_total", "", "class=\"ham\"", a.learned_ham);
    for (std::size_t i = 0; i < core::kAutolearnSkipCount; ++i) {
      const auto skip = static_cast<core::AutolearnSkip>(i);
      AppendCounter(out, "nbspamd_autolearn_skipped_total",
                    i == 0 ? "Confident verdicts not learned: the balance guard, the id learned "
                             "already, the queue full, or the write failed."
                           : "",
                    "reason=" + PrometheusLabelValue(core::AutolearnSkipName(skip)), a.skipped[i]);
    }
  }
  return out;
}

}  // namespace nbspamd::http_api
