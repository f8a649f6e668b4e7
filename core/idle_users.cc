#include "core/idle_users.h"

#include "common/log.h"
#include "common/utc_time.h"

namespace nbspamd::core {

IdleUserSweep::IdleUserSweep(SpamFilter& filter, std::chrono::seconds idle,
                             std::chrono::milliseconds interval)
    : filter_(filter), idle_(idle), task_(interval, [this] {
        if (auto swept = SweepOnce(); !swept) {
          LogError("the sweep of idle user layers failed: " + swept.error().message);
        }
      }) {}

std::expected<std::vector<std::string>, Error> IdleUserSweep::SweepOnce() {
  const std::int64_t before = filter_.options().clock() - idle_.count();
  auto users = filter_.Users().ListAllUsers();
  if (!users) return std::unexpected(std::move(users.error()));
  std::vector<std::string> dropped;
  for (const storage::UserSummary& summary : *users) {
    auto last = filter_.Users().UserLastLearned(summary.user);
    if (!last) return std::unexpected(std::move(last.error()));
    if (!*last || **last >= before) continue;
    if (auto deleted = filter_.Users().DeleteUser(summary.user); !deleted) {
      return std::unexpected(std::move(deleted.error()));
    }
    LogInfo("dropped an idle user layer",
            {{"user", summary.user}, {"last_learned", UtcTimeText(**last)}});
    dropped.push_back(summary.user);
  }
  return dropped;
}

}  // namespace nbspamd::core
