// LedgerRetentionSweep: the ledger retention (the setting ledger_retention_days, docs/CONFIG.md
// and docs/STORAGE.md "Ledger retention"). Every `interval` it retires the global ledger records
// learned more than `retention` before now (the filter's clock) through
// SpamFilter::RetireLedgerAsync: their counts move to the base counts, and their messages can no
// longer be forgotten (410 expired). Scores do not change.
//
//   LedgerRetentionSweep sweep(filter, std::chrono::days(365), std::chrono::hours(1));
//
// Thread safety: owns one thread (a PeriodicTask), stopped by the destructor after the pass under
// way. The filter must outlive the sweep.
#ifndef NBSPAMD_CORE_LEDGER_RETENTION_H_
#define NBSPAMD_CORE_LEDGER_RETENTION_H_

#include <chrono>
#include <cstdint>
#include <expected>

#include "common/error.h"
#include "core/periodic_task.h"
#include "core/spam_filter.h"

namespace nbspamd::core {

class LedgerRetentionSweep {
 public:
  // REQUIRES: retention > 0, interval > 0. The first pass comes one `interval` after
  // construction.
  LedgerRetentionSweep(SpamFilter& filter, std::chrono::seconds retention,
                       std::chrono::milliseconds interval);

  // One pass now, on the calling thread: the number of records it retired. Errors: as
  // SpamFilter::RetireLedgerAsync (the records retired before the error stay retired).
  [[nodiscard]] std::expected<std::uint64_t, Error> SweepOnce();

 private:
  SpamFilter& filter_;
  const std::chrono::seconds retention_;
  PeriodicTask task_;  // Last: starts once the rest is built.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_LEDGER_RETENTION_H_
