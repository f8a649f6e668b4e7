#include "core/source_rollback.h"

#include <mutex>
#include <string>
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
