// Router: the HTTP API as a pure function from a request to a response, testable without
// sockets (the Beast connection only moves bytes). The endpoints are the rows of endpoints.h;
// README.md and docs/API.md describe them. Requests are read by request_input.h, answers
// rendered by json_views.h; the core (core/spam_filter.h) does the work, and owns message ids
// and the verdict memory behind feedback.
// It also enforces what applies to every request: a Host naming this daemon and no browser
// request for another site (421/403, browser_guard.h), bearer tokens (401/403), the training rate
// per source (429) and the limit on requests in flight (503).
#ifndef NBSPAMD_HTTP_API_ROUTER_H_
#define NBSPAMD_HTTP_API_ROUTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/admission.h"
#include "config/reload_report.h"
#include "core/model_expiry.h"
#include "core/spam_filter.h"
#include "http_api/authenticator.h"
#include "http_api/browser_guard.h"
#include "http_api/checkpoint_shelf.h"
#include "http_api/http_errors.h"
#include "http_api/metrics.h"
#include "http_api/rate_limiter.h"

namespace nbspamd::http_api {

// Who may call what: the tokens and whether the read endpoints need one (RouterOptions'
// authenticator and auth_classify at start, then as a reload sets them).
struct Access {
  Authenticator authenticator;
  bool auth_classify = false;
};

// Receives the response to one request.
using Respond = std::move_only_function<void(Response)>;

struct RouterOptions {
  // With tokens configured, /train, /forget and /admin/* need one (and /classify when
  // auth_classify); without, nothing does.
  Authenticator authenticator;
  bool auth_classify = false;
  // The names a Host header may give besides IP addresses and localhost (browser_guard.h).
  HostNames hosts;
  // Requests handled at once (from arrival to response; a /train until it is durable). Beyond
  // it a request gets 503 at once instead of queuing. /healthz is never refused.
  std::size_t max_in_flight = 512;
  // Where POST /admin/backup writes checkpoints, one new folder each.
  std::string backup_dir = "backups";
  // The checkpoints served to joining daemons (POST /admin/checkpoint); null: none (409).
  std::shared_ptr<CheckpointShelf> checkpoints;
  // /train and /forget requests a second per source (token name); beyond: 429. 0: no limit.
  double train_rate_limit = 0;
  // Appended to GET /metrics: other front ends' counters (the milter's, server/), already in the
  // Prometheus text format. Called on an I/O thread; must be thread-safe and must not throw.
  std::function<std::string()> extra_metrics;
  // The model expiry's settings: /stats shows them, POST /admin/expire takes its defaults from
  // them (max_count, keep_weight, alpha, keep_ham).
  core::ExpiryPolicy expiry;
  // POST /admin/reload: reads the settings again and applies what can change live
  // (server/settings_reload.h). Unset: the endpoint answers 409 (nothing to reload from).
  // The body may set or unset settings live on the way (config::LiveChange).
  std::function<std::expected<config::ReloadReport, Error>(const config::LiveChange&)> reload;
};

// Thread-safe as the SpamFilter it calls. Never throws: every failure is a JSON error response.
class Router {
 public:
  explicit Router(core::SpamFilter& filter, RouterOptions options = {})
      : filter_(filter),
        options_(std::move(options)),
        limiter_(options_.train_rate_limit),
        metrics_(options_.authenticator.Names()),
        admission_({.max_requests = options_.max_in_flight,
                    .max_bytes = std::numeric_limits<std::uint64_t>::max()}) {
    SetAccess({.authenticator = options_.authenticator, .auth_classify = options_.auth_classify});
  }

  // Answers `request` by calling `respond` exactly once: before returning, except for /train
  // and /forget that reach the training writer, which are answered from the writer thread once
  // their change is durable (so `respond` must be quick: hand the response to the connection's
  // own executor). The request is not used after the call returns.
  // REQUIRES: the request's body is complete. The response's keep-alive is left to the caller.
  void HandleAsync(const Request& request, Respond respond) const;

  // HandleAsync, waiting for the response. REQUIRES: not called from a training completion.
  [[nodiscard]] Response Handle(const Request& request) const;

  // A new train_rate_limit from now on (a reload of the settings). Thread-safe.
  void SetTrainRateLimit(double per_second) const { limiter_.SetRate(per_second); }
  // New tokens and auth_classify from the next request on (a reload of the settings); a request
  // already past its check finishes as it began. A token name not given at construction is
  // counted under "other" in /metrics until a restart. Thread-safe.
  void SetAccess(Access access) const;
  // The tokens and auth_classify in force.
  [[nodiscard]] const Access& CurrentAccess() const {
    return *access_.load(std::memory_order_acquire);
  }

  // Requests being handled now.
  [[nodiscard]] std::size_t InFlight() const { return admission_.InFlight(); }

  // What GET /metrics reports; the HTTP connections record every response here.
  [[nodiscard]] Metrics& metrics() const { return metrics_; }

 private:
  core::SpamFilter& filter_;
  const RouterOptions options_;
  mutable RateLimiter limiter_;
  mutable Metrics metrics_;
  // Requests in flight (common/admission.h, the rule every front end shares); their bytes are
  // admitted by the HTTP connections (HttpLimits::max_in_flight_bytes).
  mutable Admission admission_;
  // The access rules in force: every version set stays (a reload is rare), so a request that
  // loaded one reads it to its end without a lock.
  mutable std::mutex access_mutex_;
  mutable std::vector<std::unique_ptr<const Access>> access_versions_;
  mutable std::atomic<const Access*> access_{nullptr};
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_ROUTER_H_
