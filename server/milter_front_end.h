// MilterFrontEnd: the milter listener of the daemon (milter_listen), built from the settings and
// served from the core in-process: the milter's own I/O thread reads the MTA's packets (they are
// small: parsing them is little work, and the HTTP server keeps its I/O context to itself), and
// the adapter's workers (milter_core_adapter.h) classify.
//
//   MilterFrontEnd milter;                       // declared before the core, destroyed after it
//   if (auto started = milter.Start(settings, filter); !started) Fail(started.error());
//   ...                                          // on SIGTERM:
//   milter.StopAccepting();
//   milter.Stop(std::chrono::seconds(30));        // before the model closes
//
// Thread safety: Start and Stop from the main thread; StopAccepting and Metrics from any thread
// once Start has returned.
#ifndef NBSPAMD_SERVER_MILTER_FRONT_END_H_
#define NBSPAMD_SERVER_MILTER_FRONT_END_H_

#include <chrono>
#include <expected>
#include <memory>
#include <string>

#include "common/error.h"
#include "config/settings.h"
#include "core/spam_filter.h"
#include "milter/counters.h"
#include "milter/listener.h"
#include "server/front_end_thread.h"
#include "server/milter_core_adapter.h"

namespace nbspamd::server {

class MilterFrontEnd {
 public:
  MilterFrontEnd() = default;
  MilterFrontEnd(const MilterFrontEnd&) = delete;
  MilterFrontEnd& operator=(const MilterFrontEnd&) = delete;
  ~MilterFrontEnd() { Stop(std::chrono::seconds(0)); }

  // Listens on settings.milter_listen and serves. Errors: kInvalidArgument for a bad milter_*
  // setting (naming the key), kUnavailable when the address cannot be bound.
  // REQUIRES: `filter` outlives this front end's Stop; called once.
  [[nodiscard]] std::expected<void, Error> Start(const config::Settings& settings,
                                                 core::SpamFilter& filter);

  [[nodiscard]] bool running() const { return listener_ != nullptr; }
  // Where it listens ("inet:127.0.0.1:PORT" with the bound port, "unix:/PATH").
  [[nodiscard]] std::string Address() const;
  // Stops accepting; open connections finish their message. Does nothing when not running.
  void StopAccepting();
  // Stops accepting, lets each connection finish its message in flight (up to `grace`), then
  // stops the I/O thread and the workers. Idempotent.
  void Stop(std::chrono::seconds grace);
  // The milter's counters for GET /metrics (nbspamd_milter_*); "" when not running.
  [[nodiscard]] std::string Metrics() const;

 private:
  milter::MilterCounters counters_;
  std::unique_ptr<MilterCoreAdapter> backend_;
  // Declared before the listener: its connections refer to the context until they are gone.
  FrontEndThread io_{"milter"};
  std::shared_ptr<milter::MilterListener> listener_;
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_MILTER_FRONT_END_H_
