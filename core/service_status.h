// ServiceStatus: what the core reports about itself, as one plain value, for a front end's
// health and metrics answers (GET /metrics in HTTP). Taken at one moment by
// SpamFilter::Status(); it shares the immutable model figures and copies the rest, so it stays
// valid and unchanged however long it is kept.
//
//   const core::ServiceStatus status = filter.Status();
//   if (!status.readiness.ready()) ...  // status.readiness.degraded says why
#ifndef NBSPAMD_CORE_SERVICE_STATUS_H_
#define NBSPAMD_CORE_SERVICE_STATUS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/autolearn.h"
#include "core/readiness.h"
#include "core/replication_status.h"
#include "history/scan_history.h"
#include "model/calibration.h"
#include "model/model_stats.h"
#include "model/verdict.h"
#include "storage/store.h"
#include "storage/write_health.h"

namespace nbspamd::core {

// What the model expiry did since start (core/model_expiry.h), for /metrics.
struct ExpiryFigures {
  std::uint64_t retired_records = 0;  // Ledger records retired into the base counts.
  std::uint64_t dropped_tokens = 0;   // Tokens the token expiry dropped.
  // The same in the user layers (not counted in the two above).
  std::uint64_t retired_user_records = 0;
  std::uint64_t dropped_user_tokens = 0;
  std::uint64_t passes = 0;        // Passes of the sweep, finished or failed.
  std::int64_t last_pass_end = 0;  // When the last pass ended (Unix seconds); 0: none yet.
  double last_pass_seconds = 0;    // How long it took.
  bool cap_met = true;             // Whether the last pass brought |V| to the cap.
  // Whether the last pass's age rule waited for token_expiry_min_messages messages.
  bool age_rule_waiting = false;
};

struct ServiceStatus {
  std::shared_ptr<const model::ModelStats> model;         // Classes, documents, tokens, |V|.
  std::shared_ptr<const model::Calibration> calibration;  // And its feedback histogram.
  model::VerdictThresholds thresholds;                    // SpamFilter::Thresholds.
  std::vector<storage::StorageProperty> storage;          // The backend's own figures.
  storage::WriteHealth store_health;                      // Writable, and its write faults.
  std::uint64_t training_writer_exceptions = 0;           // TrainingWriter::GroupExceptions.
  std::uint64_t training_completion_exceptions = 0;       // TrainingWriter::CompletionExceptions.
  std::uint64_t background_task_exceptions = 0;           // core::BackgroundTaskExceptions.
  std::optional<ClusterStatus> replication;               // With a training log only.
  std::optional<history::ScanHistoryFigures> history;     // With a scan history only.
  std::optional<AutolearnFigures> autolearn;              // With autolearn on only.
  ExpiryFigures expiry;                                   // ModelUpkeep::Expiry.
  Readiness readiness;                                    // From store_health and replication.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_SERVICE_STATUS_H_
