// IdleUserSweep: drops the user layers nobody has taught for a long time (the setting
// user_idle_days, docs/CONFIG.md). Every `interval` it pages through the users with a layer
// and deletes each whose user last learned (SpamFilter::UserLastLearned, the newest record of
// the user's own ledger) more than `idle` before now (the filter's clock), as
// DELETE /users/{id} does: through UserLayers::DeleteUser, so in cluster mode every daemon
// drops it. A layer with no ledger record (only counts restored from a dump) is kept.
//
//   IdleUserSweep sweep(filter, std::chrono::days(365), std::chrono::hours(1));
//
// Thread safety: owns one thread, which the destructor stops (after the deletion under way).
// The filter must outlive the sweep.
#ifndef NBSPAMD_CORE_IDLE_USERS_H_
#define NBSPAMD_CORE_IDLE_USERS_H_

#include <chrono>
#include <expected>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/periodic_task.h"
#include "core/spam_filter.h"

namespace nbspamd::core {

class IdleUserSweep {
 public:
  // REQUIRES: idle > 0, interval > 0. The first sweep comes one `interval` after construction.
  IdleUserSweep(SpamFilter& filter, std::chrono::seconds idle, std::chrono::milliseconds interval);
  IdleUserSweep(const IdleUserSweep&) = delete;
  IdleUserSweep& operator=(const IdleUserSweep&) = delete;

  // One sweep now, on the calling thread: the users whose layers it dropped, in byte order.
  // Errors: the first failure to list the users, read a user's ledger or delete a layer (the
  // layers dropped before it stay dropped).
  [[nodiscard]] std::expected<std::vector<std::string>, Error> SweepOnce();

 private:
  SpamFilter& filter_;
  const std::chrono::seconds idle_;
  PeriodicTask task_;  // Last: starts once the rest is built.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_IDLE_USERS_H_
