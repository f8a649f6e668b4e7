// Metrics: the daemon's counters and latency histograms, rendered in the Prometheus text format
// for GET /metrics. Every label set is fixed when the daemon starts (endpoints, statuses, class
// slots, the configured token names), so recording is a few relaxed atomic additions: no lock
// and no allocation on any request.
//
//   Metrics metrics({"mx1", "feedback"});
//   metrics.RecordResponse(Endpoint::kClassify, 200, std::chrono::microseconds(850));
//   metrics.RecordVerdict(label_index);
//   metrics.RecordSpamVerdict(model::Verdict::kUnsure);
//   std::string text = metrics.Render(filter.Status(), kVersion);  // core::ServiceStatus
#ifndef NBSPAMD_HTTP_API_METRICS_H_
#define NBSPAMD_HTTP_API_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/service_status.h"
#include "core/verdict_memory.h"
#include "http_api/endpoints.h"
#include "model/verdict.h"

namespace nbspamd::http_api {

// What a training request did, for the per-source counters.
// kLearned to kChecked in the order of model::LearnStatus.
enum class TrainingEvent { kLearned, kRelearned, kUnchanged, kChecked, kForgotten, kFailed };

// Where a failure that no client was told of happened: each is logged where it happens and
// counted here, so that /metrics shows what the log may have throttled.
enum class InternalError {
  kHttpConnection,      // A connection handler threw; its connection was closed.
  kIoThread,            // A handler outside any connection threw to an I/O thread.
  kTrainingCompletion,  // A training completion threw (TrainingWriter).
  kClusterCompletion,   // A cluster training completion threw (ClusterReplicator).
  kClusterReport,       // A position report or a trim read failed (ClusterReplicator).
  kBackgroundTask,      // A periodic background pass threw (core::PeriodicTask).
  kHistoryWriter,       // The scan history's writer thread caught an exception.
  kTrainingWriter,      // Writing a training group threw; its requests failed (TrainingWriter).
};
inline constexpr std::size_t kInternalErrorCount =
    static_cast<std::size_t>(InternalError::kTrainingWriter) + 1;
// Its label value: "http_session", "io_thread", ...
[[nodiscard]] std::string_view InternalErrorName(InternalError where);

// Thread-safe.
class Metrics {
 public:
  // `sources`: the token names training may come from ("" stands for training without a token
  // and is always there).
  explicit Metrics(std::vector<std::string> sources = {});
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // A response with HTTP `status` to a request for `endpoint`, `latency` after its header came.
  void RecordResponse(Endpoint endpoint, unsigned status, std::chrono::microseconds latency);
  // A /classify verdict for the class at `class_index` of the model's class list.
  void RecordVerdict(std::size_t class_index);
  // A /classify three-way verdict: spam, unsure or ham (model/verdict.h).
  void RecordSpamVerdict(model::Verdict verdict);
  // A training request from `source` (a name given at construction, else counted as "other").
  void RecordTraining(std::string_view source, TrainingEvent event);
  // What a /train said about an earlier /classify verdict of the same message.
  void RecordFeedback(core::Feedback feedback);
  // The counter the HTTP connections (kHttpConnection) and the I/O threads (kIoThread) add to.
  [[nodiscard]] std::atomic<std::uint64_t>& HandlerExceptions(InternalError where) {
    return internal_errors_[static_cast<std::size_t>(where)];
  }
  [[nodiscard]] std::uint64_t HandlerExceptionCount(InternalError where) const {
    return internal_errors_[static_cast<std::size_t>(where)].load(std::memory_order_relaxed);
  }

  // What the HTTP connections hold, kept by the connections themselves: how many are open, the
  // bytes of their read buffers (each as of the start of its latest read;
  // http_server/connection.h), and the declared bytes of the bodies admitted and not yet
  // answered (what HttpLimits::max_in_flight_bytes bounds).
  struct HttpConnectionGauges {
    std::atomic<std::int64_t> open{0};
    std::atomic<std::int64_t> read_buffer_bytes{0};
    std::atomic<std::int64_t> body_bytes_in_flight{0};
  };
  [[nodiscard]] HttpConnectionGauges& HttpConnections() { return http_connections_; }
  [[nodiscard]] const HttpConnectionGauges& HttpConnections() const { return http_connections_; }

  // The whole exposition of GET /metrics: everything recorded here and what the core reports in
  // `status` (the model's size, calibration, store health, internal errors, and in cluster mode
  // the replication gauges). `version` is the daemon's.
  [[nodiscard]] std::string Render(const core::ServiceStatus& status,
                                   std::string_view version) const;

  // Latency bucket upper bounds, in seconds.
  static constexpr std::array<double, 14> kLatencyBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5};
  // Verdicts of classes past this many are counted in the last slot.
  static constexpr std::size_t kClassSlots = 32;
  // The statuses counted one by one; any other is counted as its class (2xx, 4xx, 5xx).
  static constexpr std::array<unsigned, 17> kStatuses = {
      200, 400, 401, 403, 404, 405, 409, 411, 413, 415, 421, 429, 431, 500, 503, 507, 0};

 private:
  // What is recorded here, the model's size from `stats` and the storage's own figures.
  [[nodiscard]] std::string RenderCounters(const model::ModelStats& stats,
                                           std::span<const storage::StorageProperty> storage,
                                           std::string_view version) const;

  using Counter = std::atomic<std::uint64_t>;
  struct EndpointCounters {
    std::array<Counter, kStatuses.size() + 3> by_status{};  // Then 2xx, 4xx, 5xx others.
    std::array<Counter, kLatencyBuckets.size()> latency_buckets{};
    Counter latency_count{0};
    Counter latency_sum_microseconds{0};
  };
  static constexpr std::size_t kTrainingEvents = 6;

  std::array<EndpointCounters, kEndpointCount> endpoints_{};
  std::array<Counter, kClassSlots> verdicts_{};
  std::array<Counter, model::kVerdictCount> spam_verdicts_{};
  std::vector<std::string> sources_;                                  // "" first; "other" last.
  std::unique_ptr<std::array<Counter, kTrainingEvents>[]> training_;  // One row per source.
  std::array<Counter, 3> feedback_{};
  std::array<Counter, kInternalErrorCount> internal_errors_{};
  HttpConnectionGauges http_connections_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_METRICS_H_
