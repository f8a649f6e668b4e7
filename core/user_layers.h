// UserLayers: the users' own layers over the global model (model/layered.h, docs/API.md "Per-user
// layers") as an administrator sees them: their stats, the list of users, when each last
// trained, and deleting a user whole (layer, ledger, source index and scans), in order with
// training through the training writer, or through the training stream in cluster mode.
//
//   auto stats = filter.Users().UserStats("alice@example.org");
//   filter.Users().DeleteUserAsync("alice@example.org", [](auto deleted) { ... });
//
// Thread safety: every method may be called from any thread; DeleteUser (blocking) not from a
// training completion.
#ifndef NBSPAMD_CORE_USER_LAYERS_H_
#define NBSPAMD_CORE_USER_LAYERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "core/training_log.h"
#include "core/training_writer.h"
#include "history/scan_history.h"
#include "model/model_stats.h"
#include "storage/store.h"

namespace nbspamd::core {

using DeleteUserDone = std::move_only_function<void(std::expected<void, Error>)>;

class UserLayers {
 public:
  // `log` and `history` are read at each call (set before serving, or, the history, once when it
  // opens). All four must outlive this.
  UserLayers(storage::Store& store, TrainingWriter& writer, const std::unique_ptr<TrainingLog>& log,
             const std::atomic<history::ScanHistory*>& history)
      : store_(store), writer_(writer), log_(log), history_(history) {}
  UserLayers(const UserLayers&) = delete;
  UserLayers& operator=(const UserLayers&) = delete;

  // `user`'s layer stats (per-class documents and tokens over the global classes, and the
  // user's distinct tokens as vocabulary_size); nullopt when the user has no layer.
  // Errors: kInvalidArgument for a bad user; kDataLoss or kInternal from storage.
  [[nodiscard]] std::expected<std::optional<model::ModelStats>, Error> UserStats(
      std::string_view user) const;

  // The users with a layer after `after` in byte order of their ids, at most `limit`, with their
  // layers' stats (Store::ListUsers). Errors: storage's; kFailedPrecondition for a store
  // without user layers.
  [[nodiscard]] std::expected<std::vector<storage::UserSummary>, Error> ListUsers(
      std::string_view after, std::size_t limit) const {
    return store_.ListUsers(after, limit);
  }

  // Every user with a layer, with their layers' stats (Store::ListAllUsers). Errors: as
  // ListUsers.
  [[nodiscard]] std::expected<std::vector<storage::UserSummary>, Error> ListAllUsers() const {
    return store_.ListAllUsers();
  }

  // When `user` last taught their layer (Store::UserLastLearned): nullopt when the user has no
  // ledger record. Errors: kInvalidArgument for a bad user; storage's.
  [[nodiscard]] std::expected<std::optional<std::int64_t>, Error> UserLastLearned(
      std::string_view user) const {
    return store_.UserLastLearned(user);
  }

  // Removes everything of `user` (layer, ledger, source index) through the training writer, so
  // in order with the training requests. `done` runs once: at once for a bad user, else on the
  // writer's thread (or the stream's reader's) once the change is durable; with a scan history,
  // once the user's scans are gone too (on the history's writer). Deleting a user with no layer
  // succeeds (in cluster mode, through the training stream). Errors: kInvalidArgument for a bad
  // user, kInternal from storage, kUnavailable after StopTraining or when the stream cannot be
  // reached.
  void DeleteUserAsync(std::string_view user, DeleteUserDone done);
  // DeleteUserAsync, waiting for the outcome.
  [[nodiscard]] std::expected<void, Error> DeleteUser(std::string_view user);

 private:
  storage::Store& store_;
  TrainingWriter& writer_;
  const std::unique_ptr<TrainingLog>& log_;
  const std::atomic<history::ScanHistory*>& history_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_USER_LAYERS_H_
