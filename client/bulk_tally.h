// BulkTally: the outcomes of a train or forget run over many messages, counted by the worker
// threads, read by the progress display, and summed up at the end. Thread-safe.
#ifndef NBSPAMD_CLIENT_BULK_TALLY_H_
#define NBSPAMD_CLIENT_BULK_TALLY_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "client/progress.h"

namespace nbspamd::client {

// What happened to one message.
// kQueued: a daemon in cluster mode that answers once Redis has the change
// (cluster_wait_applied = false), before it is applied.
// kChecked: a daemon under error-driven training scored it right beyond its margin and only
// recorded it.
enum class Outcome {
  kLearned,
  kRelearned,
  kUnchanged,
  kChecked,
  kForgotten,
  kNotFound,
  kQueued,
  kFailed
};
inline constexpr std::size_t kOutcomeCount = 8;

// A message that failed, and why.
struct Failure {
  std::string path;
  std::string reason;
};

class BulkTally {
 public:
  // Keeps the first `kept_failures` failures for the report.
  explicit BulkTally(std::size_t kept_failures = 5) : kept_failures_(kept_failures) {}

  // Counts one finished message of `consumed` input bytes; `reason` is for kFailed.
  void Record(Outcome outcome, std::uint64_t consumed, const std::string& path = "",
              const std::string& reason = "");

  [[nodiscard]] std::uint64_t Count(Outcome outcome) const;
  [[nodiscard]] std::uint64_t Done() const;
  [[nodiscard]] std::uint64_t DoneBytes() const { return done_bytes_.load(); }
  // The first failures, in the order they were recorded.
  [[nodiscard]] std::vector<Failure> FirstFailures() const;

 private:
  const std::size_t kept_failures_;
  std::array<std::atomic<std::uint64_t>, kOutcomeCount> counts_{};
  std::atomic<std::uint64_t> done_bytes_{0};
  mutable std::mutex mutex_;
  std::vector<Failure> failures_;
};

// The final line: "learned 9990, relearned 0, unchanged 10, failed 0: 10000 messages in 0:12,
// 833 msg/s" (train), or "forgotten 5, not found 1, failed 0: …" (forget).
[[nodiscard]] std::string FormatSummary(const BulkTally& tally, bool forget,
                                        double elapsed_seconds);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_BULK_TALLY_H_
