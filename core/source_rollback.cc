#include "core/source_rollback.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "model/user_layer.h"

namespace nbspamd::core {

std::expected<std::vector<storage::LearnedMessage>, Error> SourceRollback::ListLearned(
    std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit,
    std::optional<std::string_view> user) const {
  if (!user) return store_.ListLearned(source, since, until, limit);
  if (auto ok = model::CheckUserId(*user); !ok) return std::unexpected(std::move(ok.error()));
  return store_.ListUserLearned(*user, source, since, until, limit);
}

namespace {

// A page cursor: "LEARNED_AT:ID", the last message of the page before.
std::string CursorOf(const storage::LearnedMessage& message) {
  return std::to_string(message.origin.learned_at) + ":" + message.id;
}

std::expected<std::pair<std::int64_t, std::string_view>, Error> ParseCursor(
    std::string_view cursor) {
  const std::size_t colon = cursor.find(':');
  std::int64_t learned_at = 0;
  const char* end = cursor.data() + (colon == std::string_view::npos ? 0 : colon);
  if (colon == std::string_view::npos ||
      std::from_chars(cursor.data(), end, learned_at) != std::from_chars_result{end, std::errc()}) {
    return std::unexpected(
        Error{ErrorCode::kInvalidArgument, "before must be the cursor a page gave as next"});
  }
  return std::pair{learned_at, cursor.substr(colon + 1)};
}

}  // namespace

std::expected<LearnedPage, Error> SourceRollback::ListLearnedPage(
    std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit,
    std::string_view before, std::optional<std::string_view> user) const {
  std::optional<std::pair<std::int64_t, std::string_view>> cursor;
  if (!before.empty()) {
    auto parsed = ParseCursor(before);
    if (!parsed) return std::unexpected(std::move(parsed.error()));
    cursor = *parsed;
  }
  auto listed = ListLearned(source, since, until, std::numeric_limits<std::size_t>::max(), user);
  if (!listed) return std::unexpected(std::move(listed.error()));
  LearnedPage page;
  page.total = listed->size();
  const auto newer = [](const storage::LearnedMessage& a, const storage::LearnedMessage& b) {
    return std::tie(a.origin.learned_at, a.id) > std::tie(b.origin.learned_at, b.id);
  };
  std::ranges::sort(*listed, newer);
  auto first = listed->begin();
  if (cursor) {
    first = std::ranges::find_if(*listed, [&](const storage::LearnedMessage& message) {
      return std::pair<std::int64_t, std::string_view>(message.origin.learned_at, message.id) <
             *cursor;
    });
  }
  const std::size_t left = static_cast<std::size_t>(listed->end() - first);
  const auto last = first + static_cast<std::ptrdiff_t>(std::min(limit, left));
  page.messages.assign(std::make_move_iterator(first), std::make_move_iterator(last));
  if (last != listed->end() && !page.messages.empty()) page.next = CursorOf(page.messages.back());
  return page;
}

void SourceRollback::RollbackAsync(std::string_view source, std::int64_t since, std::int64_t until,
                                   std::size_t limit, RollbackDone done,
                                   std::optional<std::string_view> user) {
  auto listed = ListLearned(source, since, until, limit, user);
  if (!listed) return done(std::unexpected(std::move(listed.error())));
  if (listed->empty()) return done(std::uint64_t{0});
  // The last forget to complete reports; one that finds the message gone or relearned through
  // another source meanwhile is not counted.
  struct Progress {
    std::mutex mutex;
    std::size_t remaining = 0;
    std::uint64_t forgotten = 0;
    std::optional<Error> failure;
    RollbackDone done;
  };
  auto progress = std::make_shared<Progress>();
  progress->remaining = listed->size();
  progress->done = std::move(done);
  for (storage::LearnedMessage& message : *listed) {
    auto forgotten_one = [progress](std::expected<void, Error> forgotten) {
      std::unique_lock lock(progress->mutex);
      if (forgotten) {
        ++progress->forgotten;
      } else if (forgotten.error().code != ErrorCode::kNotFound && !progress->failure) {
        progress->failure = std::move(forgotten.error());
      }
      if (--progress->remaining > 0) return;
      lock.unlock();
      if (progress->failure) return progress->done(std::unexpected(*progress->failure));
      progress->done(progress->forgotten);
    };
    if (log_) {
      TrainingChange event;
      event.kind = TrainingChange::Kind::kForget;
      event.id = std::move(message.id);
      event.only_source = std::string(source);
      if (user) {
        event.user = std::string(*user);
        event.train_global = options_.TrainsGlobal(source);
      }
      log_->Submit(std::move(event), [forgotten_one = std::move(forgotten_one)](
                                         std::expected<Replicated, Error> replicated) mutable {
        if (!replicated) return forgotten_one(std::unexpected(std::move(replicated.error())));
        forgotten_one({});
      });
      continue;
    }
    if (user) {
      writer_.ForgetForUser(std::move(message.id),
                            {std::string(*user), options_.TrainsGlobal(source)},
                            std::move(forgotten_one), std::string(source));
      continue;
    }
    writer_.Forget(std::move(message.id), std::move(forgotten_one), std::string(source));
  }
}

}  // namespace nbspamd::core
