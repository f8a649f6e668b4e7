#include "core/activity.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

namespace nbspamd::core {
namespace {

constexpr std::int64_t kMinuteMs = 60'000;

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

}  // namespace

ActivityWindow::ActivityWindow(std::function<std::int64_t()> now_ms)
    : now_ms_(now_ms ? std::move(now_ms) : SystemMillis) {}

std::size_t ActivityWindow::LatencyBucket(std::chrono::microseconds latency) {
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(latency.count(), 1));
  return std::min<std::size_t>(std::bit_width(us) - 1, kLatencyBuckets - 1);
}

ActivityWindow::Slot& ActivityWindow::Current() {
  const std::int64_t minute = now_ms_() / kMinuteMs;
  Slot& slot = slots_[static_cast<std::size_t>(minute) % kMinutes];
  std::int64_t held = slot.minute.load(std::memory_order_acquire);
  // Only a newer minute replaces the slot's; the thread whose exchange wins clears the counts.
  while (held < minute) {
    if (slot.minute.compare_exchange_weak(held, minute, std::memory_order_acq_rel)) {
      for (Counter* counter : {&slot.spam, &slot.ham, &slot.unsure, &slot.unscored, &slot.trained,
                               &slot.train_failed}) {
        counter->store(0, std::memory_order_relaxed);
      }
      for (Counter& counter : slot.classify_latency) counter.store(0, std::memory_order_relaxed);
      for (Counter& counter : slot.train_latency) counter.store(0, std::memory_order_relaxed);
      break;
    }
  }
  return slot;
}

void ActivityWindow::RecordClassify(std::optional<model::Verdict> verdict,
                                    std::chrono::microseconds latency) {
  Slot& slot = Current();
  Counter* counter = &slot.unscored;
  if (verdict == model::Verdict::kSpam) counter = &slot.spam;
  if (verdict == model::Verdict::kHam) counter = &slot.ham;
  if (verdict == model::Verdict::kUnsure) counter = &slot.unsure;
  counter->fetch_add(1, std::memory_order_relaxed);
  slot.classify_latency[LatencyBucket(latency)].fetch_add(1, std::memory_order_relaxed);
}

void ActivityWindow::RecordTrain(bool ok, std::chrono::microseconds latency) {
  Slot& slot = Current();
  (ok ? slot.trained : slot.train_failed).fetch_add(1, std::memory_order_relaxed);
  slot.train_latency[LatencyBucket(latency)].fetch_add(1, std::memory_order_relaxed);
}

std::vector<ActivityMinute> ActivityWindow::LastHour() const {
  const std::int64_t now = now_ms_() / kMinuteMs;
  std::vector<ActivityMinute> minutes;
  minutes.reserve(kMinutes);
  for (std::int64_t minute = now - static_cast<std::int64_t>(kMinutes) + 1; minute <= now;
       ++minute) {
    ActivityMinute row;
    row.start_ms = minute * kMinuteMs;
    const Slot& slot = slots_[static_cast<std::size_t>(minute) % kMinutes];
    if (minute >= 0 && slot.minute.load(std::memory_order_acquire) == minute) {
      row.spam = slot.spam.load(std::memory_order_relaxed);
      row.ham = slot.ham.load(std::memory_order_relaxed);
      row.unsure = slot.unsure.load(std::memory_order_relaxed);
      row.unscored = slot.unscored.load(std::memory_order_relaxed);
      row.trained = slot.trained.load(std::memory_order_relaxed);
      row.train_failed = slot.train_failed.load(std::memory_order_relaxed);
      row.classify_p50_ms = Quantile(slot.classify_latency, 0.5);
      row.classify_p99_ms = Quantile(slot.classify_latency, 0.99);
      row.train_p50_ms = Quantile(slot.train_latency, 0.5);
      row.train_p99_ms = Quantile(slot.train_latency, 0.99);
    }
    minutes.push_back(row);
  }
  return minutes;
}

}  // namespace nbspamd::core
