// A training log for the core tests: it records what it is given and applies nothing, as a
// cluster's stream would before delivering it.
#ifndef NBSPAMD_CORE_RECORDING_LOG_TEST_UTIL_H_
#define NBSPAMD_CORE_RECORDING_LOG_TEST_UTIL_H_

#include <optional>
#include <utility>
#include <vector>

#include "core/training_log.h"

namespace nbspamd::core {

// Appends each submitted change to `submitted` and answers at once, as taken by the log ("1-0").
// Not thread-safe.
class RecordingLog final : public TrainingLog {
 public:
  explicit RecordingLog(std::vector<TrainingChange>& submitted) : submitted_(submitted) {}
  void Submit(TrainingChange change, ReplicatedDone done) override {
    submitted_.push_back(std::move(change));
    done(Replicated{"1-0", std::nullopt});
  }
  ClusterStatus Status() const override { return {}; }
  void Stop() override {}

 private:
  std::vector<TrainingChange>& submitted_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_RECORDING_LOG_TEST_UTIL_H_
