#include "http_api/rate_limiter.h"

#include <algorithm>

namespace nbspamd::http_api {

RateLimiter::RateLimiter(double per_second)
    : per_second_(per_second), burst_(std::max(1.0, per_second)) {}

void RateLimiter::SetRate(double per_second) {
  std::lock_guard lock(mutex_);
  per_second_.store(per_second, std::memory_order_relaxed);
  burst_ = std::max(1.0, per_second);
  for (auto& [source, bucket] : buckets_) bucket.tokens = std::min(bucket.tokens, burst_);
}

bool RateLimiter::Allow(std::string_view source, Clock::time_point now) {
  if (!enabled()) return true;
  std::lock_guard lock(mutex_);
  const double per_second = per_second_.load(std::memory_order_relaxed);
  auto it = buckets_.find(std::string(source));
  if (it == buckets_.end()) {
    it = buckets_.emplace(std::string(source), Bucket{burst_, now}).first;
  }
  Bucket& bucket = it->second;
  const std::chrono::duration<double> elapsed = now - bucket.refilled;
  if (elapsed.count() > 0) {
    bucket.tokens = std::min(burst_, bucket.tokens + elapsed.count() * per_second);
    bucket.refilled = now;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

}  // namespace nbspamd::http_api
