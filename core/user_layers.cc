#include "core/user_layers.h"

#include <future>
#include <string>
#include <utility>

#include "model/user_layer.h"

namespace nbspamd::core {

void UserLayers::DeleteUserAsync(std::string_view user, DeleteUserDone done) {
  if (auto ok = model::CheckUserId(user); !ok) return done(std::unexpected(std::move(ok.error())));
  if (history::ScanHistory* history = history_.load(std::memory_order_acquire)) {
    // The user's scans go once the layer has, on the history's own writer thread (a pass over
    // the history): the training writer is free at once, and the answer comes when both are
    // gone.
    done = [history, user = std::string(user),
            done = std::move(done)](std::expected<void, Error> deleted) mutable {
      if (!deleted) return done(std::move(deleted));
      history->DeleteUserAsync(user, [done = std::make_shared<DeleteUserDone>(std::move(done))](
                                         std::expected<std::uint64_t, Error> scans) {
        if (!scans) {
          return (*done)(MakeError(
              ErrorCode::kInternal,
              "the user's layer is deleted, but not their scans: " + scans.error().message));
        }
        (*done)({});
      });
    };
  }
  if (log_) {
    TrainingChange event;
    event.kind = TrainingChange::Kind::kDeleteUser;
    event.user = std::string(user);
    return log_->Submit(std::move(event), [done = std::move(done)](
                                              std::expected<Replicated, Error> replicated) mutable {
      if (!replicated) return done(std::unexpected(std::move(replicated.error())));
      done({});
    });
  }
  writer_.DeleteUser(std::string(user), std::move(done));
}

std::expected<std::optional<model::ModelStats>, Error> UserLayers::UserStats(
    std::string_view user) const {
  if (auto ok = model::CheckUserId(user); !ok) return std::unexpected(std::move(ok.error()));
  return store_.UserStats(user);
}

std::expected<void, Error> UserLayers::DeleteUser(std::string_view user) {
  std::promise<std::expected<void, Error>> outcome;
  auto future = outcome.get_future();
  DeleteUserAsync(user, [&outcome](std::expected<void, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

}  // namespace nbspamd::core
