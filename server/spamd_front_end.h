// SpamdFrontEnd: the spamd-protocol listener of the daemon (spamd_listen), built from the
// settings and served from the core in-process: its own I/O thread reads and answers requests
// (the HTTP server keeps its I/O context to itself), and the adapter's workers
// (spamd_core_adapter.h) classify and train.
//
//   SpamdFrontEnd spamd;                         // declared before the core, destroyed after it
//   if (auto started = spamd.Start(settings, filter); !started) Fail(started.error());
//   ...                                          // on SIGTERM:
//   spamd.StopAccepting();
//   spamd.Stop(std::chrono::seconds(30));         // before the model closes
//
// Thread safety: Start and Stop from the main thread; StopAccepting and Metrics from any thread
// between them.
#ifndef NBSPAMD_SERVER_SPAMD_FRONT_END_H_
#define NBSPAMD_SERVER_SPAMD_FRONT_END_H_

#include <atomic>
#include <chrono>
#include <expected>
#include <memory>
#include <string>

#include "common/error.h"
#include "config/settings.h"
#include "core/spam_filter.h"
#include "server/front_end_thread.h"
#include "server/spamd_core_adapter.h"
#include "spamd/listener.h"

namespace nbspamd::server {

class SpamdFrontEnd {
 public:
  SpamdFrontEnd() = default;
  SpamdFrontEnd(const SpamdFrontEnd&) = delete;
  SpamdFrontEnd& operator=(const SpamdFrontEnd&) = delete;
  ~SpamdFrontEnd() { Stop(std::chrono::seconds(0)); }

  // Listens on settings.spamd_listen and serves, with TELL as settings.spamd_tell allows;
  // `on_feedback` counts what a TELL says of an earlier verdict. Errors: kInvalidArgument for a
  // bad spamd_* setting (naming the key), kUnavailable when the address cannot be bound.
  // REQUIRES: `filter` outlives this front end's Stop; called once.
  [[nodiscard]] std::expected<void, Error> Start(const config::Settings& settings,
                                                 core::SpamFilter& filter,
                                                 SpamdCoreAdapter::FeedbackHook on_feedback = {});

  [[nodiscard]] bool running() const { return listener_ != nullptr; }
  // Where it listens, with the bound port: "127.0.0.1:783", "[::1]:783".
  [[nodiscard]] std::string Address() const;
  // Stops accepting; a request being read or answered finishes. Does nothing when not running.
  void StopAccepting();
  // Stops accepting, lets the requests in flight finish (up to `grace`), then stops the I/O
  // thread and the workers. Idempotent.
  void Stop(std::chrono::seconds grace);
  // The listener's counters for GET /metrics (nbspamd_spamd_*); "" when not running.
  [[nodiscard]] std::string Metrics() const;

 private:
  std::unique_ptr<SpamdCoreAdapter> backend_;
  // Declared before the listener: its connections refer to the context until they are gone.
  FrontEndThread io_{"spamd"};
  std::shared_ptr<spamd::SpamdListener> listener_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SPAMD_FRONT_END_H_
