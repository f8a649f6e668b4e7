#include "core/idle_users.h"

#include <ctime>

#include "common/log.h"

namespace nbspamd::core {
namespace {

constexpr std::size_t kUsersPerPage = 1000;

std::string UtcTime(std::int64_t unix_seconds) {
  const std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

IdleUserSweep::IdleUserSweep(SpamFilter& filter, std::chrono::seconds idle,
                             std::chrono::milliseconds interval)
    : filter_(filter), idle_(idle), interval_(interval), thread_([this] { Run(); }) {}

IdleUserSweep::~IdleUserSweep() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

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
              {{"user", summary.user}, {"last_learned", UtcTime(**last)}});
      dropped.push_back(summary.user);
    }
    if (page->size() < kUsersPerPage) break;
    after = page->back().user;
  }
  return dropped;
}

void IdleUserSweep::Run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    if (auto swept = SweepOnce(); !swept) {
      LogError("the sweep of idle user layers failed: " + swept.error().message);
    }
    lock.lock();
  }
}

}  // namespace nbspamd::core
