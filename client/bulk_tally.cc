#include "client/bulk_tally.h"

#include <cstdio>

namespace nbspamd::client {

void BulkTally::Record(Outcome outcome, std::uint64_t consumed, const std::string& path,
                       const std::string& reason) {
  if (outcome == Outcome::kFailed) {
    std::lock_guard lock(mutex_);
    if (failures_.size() < kept_failures_) failures_.push_back(Failure{path, reason});
  }
  done_bytes_ += consumed;
  ++counts_[static_cast<std::size_t>(outcome)];
}

std::uint64_t BulkTally::Count(Outcome outcome) const {
  return counts_[static_cast<std::size_t>(outcome)].load();
}

std::uint64_t BulkTally::Done() const {
  std::uint64_t done = 0;
  for (const auto& count : counts_) done += count.load();
  return done;
}

std::vector<Failure> BulkTally::FirstFailures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

std::string FormatSummary(const BulkTally& tally, bool forget, double elapsed_seconds) {
  auto part = [&](const char* name, Outcome outcome) {
    return std::string(name) + " " + std::to_string(tally.Count(outcome));
  };
  std::string line =
      forget ? part("forgotten", Outcome::kForgotten) + ", " + part("not found", Outcome::kNotFound)
             : part("learned", Outcome::kLearned) + ", " + part("relearned", Outcome::kRelearned) +
                   ", " + part("unchanged", Outcome::kUnchanged);
  if (tally.Count(Outcome::kChecked) > 0) line += ", " + part("checked", Outcome::kChecked);
  if (tally.Count(Outcome::kQueued) > 0) line += ", " + part("queued", Outcome::kQueued);
  ProgressSnapshot snapshot;
  snapshot.done = tally.Done();
  snapshot.elapsed_seconds = elapsed_seconds;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", elapsed_seconds);
  line += ", " + part("failed", Outcome::kFailed) + ": " + std::to_string(snapshot.done) +
          " messages in " + seconds + " s, " + FormatRate(Rate(snapshot));
  return line;
}

}  // namespace nbspamd::client
