// MilterCoreAdapter: the adapter that plugs the daemon's core (core::SpamFilter) into the
// milter front end's seam (milter::MilterBackend), so that data flows milter → core as it does
// HTTP → core. It lives in server/ so that milter/ stays free of the core (tests/check-layers).
//
//   MilterCoreAdapter backend(filter, /*workers=*/2);
//   milter::ConnectionContext context;
//   context.backend = &backend;
//   ...                // serve; then stop the listener and let its connections finish
//   backend.Stop();    // waits for the classifications in flight
//
// Each message is classified on a worker thread of the adapter's own pool, never on the milter's
// I/O thread, so a large message does not hold up the packets of other MTA connections.
//
// With `user_layers` (the milter_user_layers setting), a message with exactly one envelope
// recipient is scored with that recipient's user layer: the address, ASCII-lowercased, is the
// user id, as /classify?user= and /train?user= take it (docs/API.md, "Per-user layers"). A
// message for several recipients gets one verdict for all of them, the global model's; so does a
// recipient that is no valid user id (model::CheckUserId).
#ifndef NBSPAMD_SERVER_MILTER_CORE_ADAPTER_H_
#define NBSPAMD_SERVER_MILTER_CORE_ADAPTER_H_

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "common/admission.h"
#include "core/spam_filter.h"
#include "milter/backend.h"
#include "milter/counters.h"

namespace nbspamd::server {

// Thread-safe: ClassifyAsync may be called from any thread at once; Stop from one thread, after
// the milter listener has stopped.
class MilterCoreAdapter final : public milter::MilterBackend {
 public:
  // REQUIRES: `filter` outlives this; workers >= 1. `limits`: the messages and bytes waiting for
  // or in classification at once (common/admission.h); beyond them a message is answered
  // kUnavailable at once, and the connection applies its fail mode.
  MilterCoreAdapter(core::SpamFilter& filter, unsigned workers, bool user_layers = false,
                    AdmissionLimits limits = {});
  ~MilterCoreAdapter() override;

  // Classifies on a worker. The message is known as its Message-ID when SpamFilter::ValidateId
  // takes it (so that /train with the same id later counts as feedback), else by its content
  // id. `done` gets the verdict, or the core's error: kFailedPrecondition before anything was
  // learned, kInvalidArgument for an empty message; the connection then applies its fail mode.
  void ClassifyAsync(std::string message, milter::MessageContext context,
                     milter::ClassifyDone done) override;

  // Finishes the classifications queued so far and joins the workers. Idempotent.
  void Stop();

  // Exceptions caught in the work for a message or in its answer (common/handler_guard.h): each
  // is a bug, answered as kInternal, noted in the log.
  [[nodiscard]] std::uint64_t Exceptions() const { return exceptions_.load(); }
  // Messages refused for being over the limits, since start.
  [[nodiscard]] std::uint64_t Refused() const { return admission_.Refused(); }

 private:
  core::SpamFilter& filter_;
  const bool user_layers_;
  std::atomic<std::uint64_t> exceptions_ = 0;
  Admission admission_;
  boost::asio::thread_pool pool_;  // Last: joined (by Stop) before the members above go.
};

// The user layer a message is scored with under milter_user_layers: its one envelope recipient,
// ASCII-lowercased, when it has exactly one and that is a valid user id; else none.
[[nodiscard]] std::optional<std::string> MilterUserOf(const milter::MessageContext& context);

// The milter's counters in the Prometheus text format (nbspamd_milter_*), for GET /metrics;
// `adapter_exceptions` (MilterCoreAdapter::Exceptions) count as internal errors.
[[nodiscard]] std::string RenderMilterMetrics(const milter::MilterCounters& counters,
                                              std::uint64_t adapter_exceptions = 0);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_MILTER_CORE_ADAPTER_H_
