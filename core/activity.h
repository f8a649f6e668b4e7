// ActivityWindow: what the daemon did (classifications by verdict, trainings, and their
// latencies) at three resolutions, for the console's graphs (GET /activity?range=):
//
//   hour   60 rows of a minute
//   day    288 rows of 5 minutes
//   month  720 rows of an hour (30 days)
//
//   ActivityWindow activity;                        // the system clock
//   activity.RecordClassify(model::Verdict::kSpam, std::chrono::microseconds(850));
//   for (const ActivityRow& row : activity.Rows(ActivityRange::kDay)) ...   // oldest first
//
// It lives in the process; Snapshot and Restore carry it over a restart (activity_file.h keeps
// a snapshot in the data folder). Prometheus (/metrics) stays the long-term record.
//
// Thread safety: every method but Restore may be called from any thread; recording takes no lock
// (a few relaxed atomic adds into the current slot of each resolution). The first event of a new
// period resets the slot it reuses; an event another thread records into that slot during the
// reset may be lost, so a period's counts are exact except at its first instant.
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

// One row of a range. Latency quantiles are the upper bounds of power-of-two microsecond
// buckets (so within a factor of two, never below the truth); 0 when nothing was recorded.
struct ActivityRow {
  std::int64_t start_ms = 0;                    // Unix milliseconds of the period's start.
  std::uint64_t spam = 0, ham = 0, unsure = 0;  // Classifications by verdict.
  std::uint64_t unscored = 0;                   // Classifications with no verdict (no model yet).
  std::uint64_t trained = 0;                    // Trainings and forgets answered successfully.
  std::uint64_t train_rejected = 0;  // Refused as the caller's error (4xx: malformed, unknown).
  std::uint64_t train_failed = 0;    // Failed in the daemon (5xx: storage, shutting down).
  double classify_p50_ms = 0, classify_p99_ms = 0;
  double train_p50_ms = 0, train_p99_ms = 0;

  [[nodiscard]] std::uint64_t classified() const { return spam + ham + unsure + unscored; }
};
// The name rows had when the window covered only an hour.
using ActivityMinute = ActivityRow;

enum class ActivityRange : std::uint8_t { kHour = 0, kDay = 1, kMonth = 2 };
inline constexpr std::size_t kActivityRangeCount = 3;

// How a range is cut: `rows` periods of `step_ms`.
struct ActivityRangeSpec {
  std::int64_t step_ms;
  std::size_t rows;
};
inline constexpr std::array<ActivityRangeSpec, kActivityRangeCount> kActivityRanges = {{
    {60'000, 60},      // hour
    {300'000, 288},    // day
    {3'600'000, 720},  // month
}};

// How a training ended, for its row.
enum class TrainResult : std::uint8_t { kDone, kRejected, kFailed };

// The raw counts of one period of one range, as Snapshot gives them and Restore takes them.
struct ActivitySlotCounts {
  static constexpr std::size_t kLatencyBuckets = 25;
  ActivityRange range = ActivityRange::kHour;
  std::int64_t period = 0;  // Unix ms / the range's step_ms.
  // spam, ham, unsure, unscored, trained, train_rejected, train_failed.
  std::array<std::uint64_t, 7> counts{};
  std::array<std::uint64_t, kLatencyBuckets> classify_latency{};
  std::array<std::uint64_t, kLatencyBuckets> train_latency{};

  friend bool operator==(const ActivitySlotCounts&, const ActivitySlotCounts&) = default;
};

class ActivityWindow {
 public:
  static constexpr std::size_t kMinutes = 60;
  // Bucket b counts latencies in [2^b, 2^(b+1)) µs (bucket 0 also those under 1 µs); the last
  // one everything from 2^(kLatencyBuckets-1) µs (about 17 s) on.
  static constexpr std::size_t kLatencyBuckets = ActivitySlotCounts::kLatencyBuckets;

  // `now_ms` gives Unix milliseconds (the seam tests use to move time). `ranges`: how many of
  // the ranges, in the order of ActivityRange, are recorded (a benchmark's seam: 1 records the
  // hour alone, as the window did before the day and the month); the others stay empty.
  explicit ActivityWindow(std::function<std::int64_t()> now_ms = {},
                          std::size_t ranges = kActivityRangeCount);

  ActivityWindow(const ActivityWindow&) = delete;
  ActivityWindow& operator=(const ActivityWindow&) = delete;

  // A classification answered with `verdict` (nullopt: no verdict) after `latency`.
  void RecordClassify(std::optional<model::Verdict> verdict, std::chrono::microseconds latency);
  // A training (learn, forget, learn or forget by scan) answered after `latency`.
  void RecordTrain(TrainResult result, std::chrono::microseconds latency);

  // The range's rows, the current period last; a period with no events has only start_ms.
  [[nodiscard]] std::vector<ActivityRow> Rows(ActivityRange range) const;
  [[nodiscard]] std::vector<ActivityRow> LastHour() const { return Rows(ActivityRange::kHour); }

  // Every period of every range that is still in its range and has an event.
  [[nodiscard]] std::vector<ActivitySlotCounts> Snapshot() const;
  // Adds `saved` (a Snapshot of an earlier run) to the window: periods that have left their
  // range, or that are not of a range, are skipped. REQUIRES: nothing records or restores at the
  // same time (call it at start, before serving).
  void Restore(const std::vector<ActivitySlotCounts>& saved);

 private:
  using Counter = std::atomic<std::uint64_t>;
  using Buckets = std::array<Counter, kLatencyBuckets>;
  struct Slot {
    std::atomic<std::int64_t> period{-1};  // The period (Unix ms / step) the counts are of.
    std::array<Counter, 7> counts{};       // As ActivitySlotCounts::counts.
    Buckets classify_latency{};
    Buckets train_latency{};
  };
  struct Ring {
    ActivityRangeSpec spec;
    std::vector<Slot> slots;
  };

  // Adds one to counts[index] and to the latency's bucket of `buckets` in each recorded range.
  void Record(std::size_t index, Buckets Slot::*buckets, std::chrono::microseconds latency);
  // The slot of `ring` for the period holding `now_ms`, reset first when it held an older one.
  static Slot& Current(Ring& ring, std::int64_t now_ms);
  static std::size_t LatencyBucket(std::chrono::microseconds latency);

  std::function<std::int64_t()> now_ms_;
  std::size_t recorded_ranges_;  // The first this many rings_ are recorded.
  std::array<Ring, kActivityRangeCount> rings_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_ACTIVITY_H_
