#include "core/idle_users.h"

#include "common/log.h"
#include "common/utc_time.h"

namespace nbspamd::core {
namespace {

constexpr std::size_t kUsersPerPage = 1000;

}  // namespace

IdleUserSweep::IdleUserSweep(SpamFilter& filter, std::chrono::seconds idle,
                             std::chrono::milliseconds interval)
    : filter_(filter), idle_(idle), task_(interval, [this] {
        if (auto swept = SweepOnce(); !swept) {
          LogError("the sweep of idle user layers failed: " + swept.error().message);
        }
      }) {}

std::expected<std::vector<std::string>, Error> IdleUserSweep::SweepOnce() {
  const std::int64_t before = filter_.options().clock() - idle_.count();
  std::vector<std::string> dropped;
  std::string after;
  for (;;) {
    auto page = filter_.ListUsers(after, kUsersPerPage);
    if (!page) return std::unexpected(std::move(page.error()));
    for (const storage::UserSummary& summary : *page) {
      auto last = filter_.UserLastLearned(summary.user);
      if (!last) return std::unexpected(std::move(last.error()));
      if (!*last || **last >= before) continue;
      if (auto deleted = filter_.DeleteUser(summary.user); !deleted) {
        return std::unexpected(std::move(deleted.error()));
      }
      LogInfo("dropped an idle user layer",
              {{"user", summary.user}, {"last_learned", UtcTimeText(**last)}});
      dropped.push_back(summary.user);
    }
    if (page->size() < kUsersPerPage) break;
    after = page->back().user;
  }
  return dropped;
}

}  // namespace nbspamd::core
