// ActivityWindow: what the daemon did over the last hour, minute by minute (classifications by
// verdict, trainings, and their latencies), for the console's graphs (GET /activity). It lives in
// the process and starts empty at each start; Prometheus (/metrics) is the long-term record.
//
//   ActivityWindow activity;                        // the system clock
//   activity.RecordClassify(model::Verdict::kSpam, std::chrono::microseconds(850));
//   for (const ActivityMinute& minute : activity.LastHour()) ...   // 60 rows, oldest first
//
// Thread safety: every method may be called from any thread; recording takes no lock (a few
// relaxed atomic adds into the current minute's slot). The first event of a new minute resets
// the slot it reuses; an event another thread records into that slot during the reset may be
// lost, so a minute's counts are exact except at its first instant.
#ifndef NBSPAMD_CORE_ACTIVITY_H_
#define NBSPAMD_CORE_ACTIVITY_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "model/verdict.h"

namespace nbspamd::core {

// One minute of the window. Latency quantiles are the upper bounds of power-of-two microsecond
// buckets (so within a factor of two, never below the truth); 0 when nothing was recorded.
struct ActivityMinute {
  std::int64_t start_ms = 0;                    // Unix milliseconds of the minute's start.
  std::uint64_t spam = 0, ham = 0, unsure = 0;  // Classifications by verdict.
  std::uint64_t unscored = 0;                   // Classifications with no verdict (no model yet).
  std::uint64_t trained = 0;                    // Trainings and forgets answered successfully.
  std::uint64_t train_failed = 0;               // Trainings and forgets answered with an error.
  double classify_p50_ms = 0, classify_p99_ms = 0;
  double train_p50_ms = 0, train_p99_ms = 0;

  [[nodiscard]] std::uint64_t classified() const { return spam + ham + unsure + unscored; }
};

class ActivityWindow {
 public:
  static constexpr std::size_t kMinutes = 60;
  // Bucket b counts latencies in [2^b, 2^(b+1)) µs (bucket 0 also those under 1 µs); the last
  // one everything from 2^(kLatencyBuckets-1) µs (about 17 s) on.
  static constexpr std::size_t kLatencyBuckets = 25;

  // `now_ms` gives Unix milliseconds (the seam tests use to move time).
  explicit ActivityWindow(std::function<std::int64_t()> now_ms = {});

  ActivityWindow(const ActivityWindow&) = delete;
  ActivityWindow& operator=(const ActivityWindow&) = delete;

  // A classification answered with `verdict` (nullopt: no verdict) after `latency`.
  void RecordClassify(std::optional<model::Verdict> verdict, std::chrono::microseconds latency);
  // A training (learn, forget, learn or forget by scan) answered after `latency`.
  void RecordTrain(bool ok, std::chrono::microseconds latency);

  // The last kMinutes minutes, the current one last; a minute with no events has only start_ms.
  [[nodiscard]] std::vector<ActivityMinute> LastHour() const;

 private:
  using Counter = std::atomic<std::uint64_t>;
  struct Slot {
    std::atomic<std::int64_t> minute{-1};  // The minute (Unix ms / 60,000) the counts are of.
    Counter spam{0}, ham{0}, unsure{0}, unscored{0}, trained{0}, train_failed{0};
    std::array<Counter, kLatencyBuckets> classify_latency{};
    std::array<Counter, kLatencyBuckets> train_latency{};
  };

  // The slot of the current minute, reset first when it held an older minute.
  Slot& Current();
  static std::size_t LatencyBucket(std::chrono::microseconds latency);

  std::function<std::int64_t()> now_ms_;
  std::array<Slot, kMinutes> slots_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_ACTIVITY_H_
