// SpamdCoreAdapter: the adapter that plugs the daemon's core (core::SpamFilter) into the
// spamd front end's seam (spamd::SpamdBackend), so that data flows spamd → core as it does
// HTTP → core. It lives in server/ so that spamd/ stays free of the core (tests/check-layers).
//
//   SpamdCoreAdapter backend(filter, /*workers=*/2);
//   auto listener = spamd::SpamdListener::Create(io, endpoint, backend, options);
//   ...                // serve; then stop the listener and let its connections finish
//   backend.Stop();    // waits for the requests in flight
//
// Each request runs on a worker of the adapter's own pool, never on the spamd I/O thread, so
// that tokenizing a large message does not hold up other connections. CHECK and the other
// classifying commands remember the verdict under the message's content id, so that a later
// TELL or /train of the same message counts as feedback. TELL learns and forgets by content, as
// spamd does, recorded under the grant's source name.
//
// With `user_layers` (the spamd_user_layers setting), a request's User header names a user layer
// (docs/API.md, "Per-user layers"): the classifying commands score with it and TELL learns and
// forgets in it (and in the global model only under train_global_from_users). A request without
// User, or with user layers off, uses the global model alone.
#ifndef NBSPAMD_SERVER_SPAMD_CORE_ADAPTER_H_
#define NBSPAMD_SERVER_SPAMD_CORE_ADAPTER_H_

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/admission.h"
#include "core/spam_filter.h"
#include "spamd/backend.h"
#include "spamd/connection_registry.h"

namespace nbspamd::server {

// Thread-safe: every method may be called from any thread at once; Stop from one thread, after
// the spamd listener has stopped.
class SpamdCoreAdapter final : public spamd::SpamdBackend {
 public:
  // Receives the feedback a TELL gives on an earlier classification of the same message
  // (core::TrainOutcome::feedback), on the writer's thread; must be thread-safe and not block.
  using FeedbackHook = std::function<void(core::Feedback)>;

  // REQUIRES: `filter` outlives this; workers >= 1. `limits`: the requests and bytes waiting
  // for or in a worker at once (common/admission.h); beyond them a request is answered
  // kUnavailable at once (EX_TEMPFAIL).
  SpamdCoreAdapter(core::SpamFilter& filter, unsigned workers, FeedbackHook on_feedback = {},
                   bool user_layers = false, AdmissionLimits limits = {});
  ~SpamdCoreAdapter() override;

  // Errors: the core's (kFailedPrecondition before anything was learned, kInvalidArgument for an
  // empty message or a bad user id), kInternal for an exception in the core.
  void ClassifyAsync(std::string_view message, const spamd::RequestContext& context,
                     spamd::ClassifyDone done) override;
  // Errors: the core's TrainAsync errors; kUnavailable once training has stopped.
  void LearnAsync(std::string_view message, spamd::SpamdLabel label,
                  const spamd::RequestContext& context, spamd::TellDone done) override;
  // Errors: kNotFound when the message was never learned; else as LearnAsync.
  void ForgetAsync(std::string_view message, const spamd::RequestContext& context,
                   spamd::TellDone done) override;

  // Finishes the requests queued so far and joins the workers. Idempotent.
  void Stop();

  // Exceptions caught in the work for a request, in its answer or in the feedback hook
  // (common/handler_guard.h): each is a bug; the request is answered all the same.
  [[nodiscard]] std::uint64_t Exceptions() const { return exceptions_.load(); }
  // Requests refused for being over the limits, since start.
  [[nodiscard]] std::uint64_t Refused() const { return admission_.Refused(); }

 private:
  // The user layer a request names: its User header with user layers on, else none.
  [[nodiscard]] std::optional<std::string> UserOf(const spamd::RequestContext& context) const;

  core::SpamFilter& filter_;
  FeedbackHook on_feedback_;
  const bool user_layers_;
  std::atomic<std::uint64_t> exceptions_ = 0;
  Admission admission_;
  boost::asio::thread_pool pool_;  // Last: joined (by Stop) before the members above go.
};

// The spamd listener's counters in the Prometheus text format (nbspamd_spamd_*), for GET
// /metrics.
// `adapter_exceptions` (SpamdCoreAdapter::Exceptions) count as internal errors.
[[nodiscard]] std::string RenderSpamdMetrics(const spamd::SpamdCounters& counters,
                                             std::uint64_t adapter_exceptions = 0);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SPAMD_CORE_ADAPTER_H_
