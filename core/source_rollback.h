// SourceRollback: what one source (a bearer token's name, a spamd TELL grant) trained in a time
// window, listed from the ledger's source index, and forgotten, each message only if it is still
// that source's when the writer reaches it (docs/RELIABILITY.md, "Access control"): a leaked
// token's training undone. Through the training writer, or the training stream in cluster mode.
//
//   auto learned = filter.Rollback().ListLearned("mail-gateway", since, until, 1000);
//   filter.Rollback().RollbackAsync("mail-gateway", since, until, 1000, [](auto n) { ... });
//
// Thread safety: every method may be called from any thread.
#ifndef NBSPAMD_CORE_SOURCE_ROLLBACK_H_
#define NBSPAMD_CORE_SOURCE_ROLLBACK_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "core/spam_filter_options.h"
#include "core/training_log.h"
#include "core/training_writer.h"
#include "storage/store.h"

namespace nbspamd::core {

// One page of what a source trained (SourceRollback::ListLearnedPage).
struct LearnedPage {
  std::vector<storage::LearnedMessage> messages;  // Newest first, by (learned_at, id) descending.
  std::uint64_t total = 0;  // Every record in the window, not only this page's.
  std::string next;         // The cursor of the next, older, page; empty on the last page.
};

// Receives how many messages a rollback forgot.
using RollbackDone = std::move_only_function<void(std::expected<std::uint64_t, Error>)>;

class SourceRollback {
 public:
  // `log` is read at each call (set before serving in cluster mode). All four must outlive this.
  SourceRollback(storage::Store& store, TrainingWriter& writer,
                 const std::unique_ptr<TrainingLog>& log, const SpamFilterOptions& options)
      : store_(store), writer_(writer), log_(log), options_(options) {}
  SourceRollback(const SourceRollback&) = delete;
  SourceRollback& operator=(const SourceRollback&) = delete;

  // The messages learned through `source` at a Unix time in [since, until), oldest first, at
  // most `limit` (Store::ListLearned); with `user`, those of the user's own ledger
  // (Store::ListUserLearned). Errors: kInvalidArgument for a bad user; storage's.
  [[nodiscard]] std::expected<std::vector<storage::LearnedMessage>, Error> ListLearned(
      std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit,
      std::optional<std::string_view> user = std::nullopt) const;

  // One page of the messages learned through `source` in [since, until), newest first, at most
  // `limit`, from `before` (a LearnedPage::next; "" for the newest), with how many the window
  // holds. Reads the window's whole index (and one ledger record per entry) to count it.
  // Errors: kInvalidArgument for a malformed `before` or a bad user; storage's.
  [[nodiscard]] std::expected<LearnedPage, Error> ListLearnedPage(
      std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit,
      std::string_view before, std::optional<std::string_view> user = std::nullopt) const;

  // Forgets the messages ListLearned names (at most `limit`), each only if it is still learned
  // through `source` when the writer reaches it. `done` gets how many were forgotten, once all
  // are durable: on the calling thread when there are none, else on the writer thread. With
  // `user`: from that user's layer (and from the global model, under train_global_from_users,
  // where the global record came from `source` too).
  void RollbackAsync(std::string_view source, std::int64_t since, std::int64_t until,
                     std::size_t limit, RollbackDone done,
                     std::optional<std::string_view> user = std::nullopt);

 private:
  storage::Store& store_;
  TrainingWriter& writer_;
  const std::unique_ptr<TrainingLog>& log_;
  const SpamFilterOptions& options_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_SOURCE_ROLLBACK_H_
