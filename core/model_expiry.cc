#include "core/ledger_retention.h"

#include <string>

#include "common/log.h"
#include "common/utc_time.h"

namespace nbspamd::core {

LedgerRetentionSweep::LedgerRetentionSweep(SpamFilter& filter, std::chrono::seconds retention,
                                           std::chrono::milliseconds interval)
    : filter_(filter), retention_(retention), task_(interval, [this] {
        if (auto swept = SweepOnce(); !swept) {
          LogError("the ledger retention pass failed: " + swept.error().message);
        }
      }) {}

std::expected<std::uint64_t, Error> LedgerRetentionSweep::SweepOnce() {
  const std::int64_t before = filter_.options().clock() - retention_.count();
  auto retired = filter_.RetireLedger(before);
  if (retired && *retired > 0) {
    LogInfo("retired ledger records into the base counts",
            {{"records", std::to_string(*retired)}, {"learned_before", UtcTimeText(before)}});
  }
  return retired;
}

}  // namespace nbspamd::core
