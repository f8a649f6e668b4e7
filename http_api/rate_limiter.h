// RateLimiter: a token bucket per training source (a bearer token's name, or "" when training
// needs no token). A source may make `per_second` requests a second on average, and a burst of
// up to one second's worth (at least one) at once.
//
//   RateLimiter limiter(/*per_second=*/50);
//   if (!limiter.Allow(source, std::chrono::steady_clock::now())) return 429;
#ifndef NBSPAMD_HTTP_API_RATE_LIMITER_H_
#define NBSPAMD_HTTP_API_RATE_LIMITER_H_

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace nbspamd::http_api {

// Thread-safe. Sources are the configured token names, so the table stays small.
class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // `per_second` 0: no limit.
  explicit RateLimiter(double per_second = 0);
  RateLimiter(const RateLimiter& other) : RateLimiter(other.per_second_.load()) {}

  [[nodiscard]] bool enabled() const { return per_second_.load(std::memory_order_relaxed) > 0; }

  // A new rate from now on (a reload of the settings); each source's bucket keeps what it holds,
  // up to the new burst. 0: no limit. Thread-safe.
  void SetRate(double per_second);

  // Takes one request from `source`'s bucket at time `now`; false when the bucket is empty.
  [[nodiscard]] bool Allow(std::string_view source, Clock::time_point now);

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled;
  };

  std::atomic<double> per_second_;  // Read without the lock by enabled(); set under it.
  double burst_;                    // Guarded by mutex_.
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_RATE_LIMITER_H_
