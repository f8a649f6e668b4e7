#include "core/activity.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

namespace nbspamd::core {
namespace {

enum CountIndex : std::size_t {
  kSpam = 0,
  kHam = 1,
  kUnsure = 2,
  kUnscored = 3,
  kTrained = 4,
  kTrainRejected = 5,
  kTrainFailed = 6,
};

std::int64_t SystemMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The upper bound, in milliseconds, of the bucket holding the q-quantile of `buckets`.
template <typename Buckets>
double Quantile(const Buckets& buckets, double q) {
  std::uint64_t total = 0;
  for (const auto& bucket : buckets) total += bucket.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  // The nearest rank: the smallest value with at least q of the values at or below it.
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    seen += buckets[b].load(std::memory_order_relaxed);
    if (seen >= rank) return static_cast<double>(std::uint64_t{1} << (b + 1)) / 1000.0;
  }
  return static_cast<double>(std::uint64_t{1} << buckets.size()) / 1000.0;
}

// Floor division: periods before 1970 (negative times) stay in order.
std::int64_t PeriodOf(std::int64_t ms, std::int64_t step) {
  return ms >= 0 ? ms / step : -((-ms + step - 1) / step);
}

}  // namespace

ActivityWindow::ActivityWindow(std::function<std::int64_t()> now_ms, std::size_t ranges)
    : now_ms_(now_ms ? std::move(now_ms) : SystemMillis),
      recorded_ranges_(std::min(ranges, kActivityRangeCount)) {
  for (std::size_t r = 0; r < kActivityRangeCount; ++r) {
    rings_[r].spec = kActivityRanges[r];
    rings_[r].slots = std::vector<Slot>(kActivityRanges[r].rows);
  }
}

std::size_t ActivityWindow::LatencyBucket(std::chrono::microseconds latency) {
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(latency.count(), 1));
  return std::min<std::size_t>(std::bit_width(us) - 1, kLatencyBuckets - 1);
}

ActivityWindow::Slot& ActivityWindow::Current(Ring& ring, std::int64_t now_ms) {
  const std::int64_t period = PeriodOf(now_ms, ring.spec.step_ms);
  const auto rows = static_cast<std::int64_t>(ring.slots.size());
  Slot& slot = ring.slots[static_cast<std::size_t>(((period % rows) + rows) % rows)];
  std::int64_t held = slot.period.load(std::memory_order_acquire);
  // Only a newer period replaces the slot's; the thread whose exchange wins clears the counts.
  while (held < period) {
    if (slot.period.compare_exchange_weak(held, period, std::memory_order_acq_rel)) {
      for (Counter& counter : slot.counts) counter.store(0, std::memory_order_relaxed);
      for (Counter& counter : slot.classify_latency) counter.store(0, std::memory_order_relaxed);
      for (Counter& counter : slot.train_latency) counter.store(0, std::memory_order_relaxed);
      break;
    }
  }
  return slot;
}

void ActivityWindow::RecordClassify(std::optional<model::Verdict> verdict,
                                    std::chrono::microseconds latency) {
  std::size_t index = kUnscored;
  if (verdict == model::Verdict::kSpam) index = kSpam;
  if (verdict == model::Verdict::kHam) index = kHam;
  if (verdict == model::Verdict::kUnsure) index = kUnsure;
  Record(index, &Slot::classify_latency, latency);
}

void ActivityWindow::RecordTrain(TrainResult result, std::chrono::microseconds latency) {
  const std::size_t index = result == TrainResult::kDone       ? kTrained
                            : result == TrainResult::kRejected ? kTrainRejected
                                                               : kTrainFailed;
  Record(index, &Slot::train_latency, latency);
}

void ActivityWindow::Record(std::size_t index, Buckets Slot::*buckets,
                            std::chrono::microseconds latency) {
  const std::size_t bucket = LatencyBucket(latency);
  const std::int64_t now = now_ms_();
  for (std::size_t r = 0; r < recorded_ranges_; ++r) {
    Slot& slot = Current(rings_[r], now);
    slot.counts[index].fetch_add(1, std::memory_order_relaxed);
    (slot.*buckets)[bucket].fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<ActivityRow> ActivityWindow::Rows(ActivityRange range) const {
  const Ring& ring = rings_[static_cast<std::size_t>(range)];
  const std::int64_t step = ring.spec.step_ms;
  const auto rows = static_cast<std::int64_t>(ring.slots.size());
  const std::int64_t now = PeriodOf(now_ms_(), step);
  std::vector<ActivityRow> out;
  out.reserve(ring.slots.size());
  for (std::int64_t period = now - rows + 1; period <= now; ++period) {
    ActivityRow row;
    row.start_ms = period * step;
    const Slot& slot = ring.slots[static_cast<std::size_t>(((period % rows) + rows) % rows)];
    if (slot.period.load(std::memory_order_acquire) == period) {
      row.spam = slot.counts[kSpam].load(std::memory_order_relaxed);
      row.ham = slot.counts[kHam].load(std::memory_order_relaxed);
      row.unsure = slot.counts[kUnsure].load(std::memory_order_relaxed);
      row.unscored = slot.counts[kUnscored].load(std::memory_order_relaxed);
      row.trained = slot.counts[kTrained].load(std::memory_order_relaxed);
      row.train_rejected = slot.counts[kTrainRejected].load(std::memory_order_relaxed);
      row.train_failed = slot.counts[kTrainFailed].load(std::memory_order_relaxed);
      row.classify_p50_ms = Quantile(slot.classify_latency, 0.5);
      row.classify_p99_ms = Quantile(slot.classify_latency, 0.99);
      row.train_p50_ms = Quantile(slot.train_latency, 0.5);
      row.train_p99_ms = Quantile(slot.train_latency, 0.99);
    }
    out.push_back(row);
  }
  return out;
}

std::vector<ActivitySlotCounts> ActivityWindow::Snapshot() const {
  std::vector<ActivitySlotCounts> saved;
  for (std::size_t r = 0; r < kActivityRangeCount; ++r) {
    const Ring& ring = rings_[r];
    const auto rows = static_cast<std::int64_t>(ring.slots.size());
    const std::int64_t now = PeriodOf(now_ms_(), ring.spec.step_ms);
    for (const Slot& slot : ring.slots) {
      const std::int64_t period = slot.period.load(std::memory_order_acquire);
      if (period < 0 || period <= now - rows || period > now) continue;
      ActivitySlotCounts counts;
      counts.range = static_cast<ActivityRange>(r);
      counts.period = period;
      bool any = false;
      for (std::size_t i = 0; i < counts.counts.size(); ++i) {
        counts.counts[i] = slot.counts[i].load(std::memory_order_relaxed);
        any = any || counts.counts[i] != 0;
      }
      if (!any) continue;
      for (std::size_t b = 0; b < kLatencyBuckets; ++b) {
        counts.classify_latency[b] = slot.classify_latency[b].load(std::memory_order_relaxed);
        counts.train_latency[b] = slot.train_latency[b].load(std::memory_order_relaxed);
      }
      saved.push_back(counts);
    }
  }
  std::ranges::sort(saved, {}, [](const ActivitySlotCounts& counts) {
    return std::pair(counts.range, counts.period);
  });
  return saved;
}

void ActivityWindow::Restore(const std::vector<ActivitySlotCounts>& saved) {
  const std::int64_t now_ms = now_ms_();
  for (const ActivitySlotCounts& counts : saved) {
    const auto r = static_cast<std::size_t>(counts.range);
    if (r >= kActivityRangeCount) continue;
    Ring& ring = rings_[r];
    const auto rows = static_cast<std::int64_t>(ring.slots.size());
    const std::int64_t now = PeriodOf(now_ms, ring.spec.step_ms);
    if (counts.period <= now - rows || counts.period > now) continue;
    Slot& slot = ring.slots[static_cast<std::size_t>(((counts.period % rows) + rows) % rows)];
    if (slot.period.load(std::memory_order_relaxed) != counts.period) {
      slot.period.store(counts.period, std::memory_order_relaxed);
      for (Counter& counter : slot.counts) counter.store(0, std::memory_order_relaxed);
      for (Counter& counter : slot.classify_latency) counter.store(0, std::memory_order_relaxed);
      for (Counter& counter : slot.train_latency) counter.store(0, std::memory_order_relaxed);
    }
    for (std::size_t i = 0; i < counts.counts.size(); ++i) {
      slot.counts[i].fetch_add(counts.counts[i], std::memory_order_relaxed);
    }
    for (std::size_t b = 0; b < kLatencyBuckets; ++b) {
      slot.classify_latency[b].fetch_add(counts.classify_latency[b], std::memory_order_relaxed);
      slot.train_latency[b].fetch_add(counts.train_latency[b], std::memory_order_relaxed);
    }
  }
  std::atomic_thread_fence(std::memory_order_release);
}

}  // namespace nbspamd::core
