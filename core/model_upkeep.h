// ModelUpkeep: the jobs that keep a model bounded in time and size: the ledger retention and the
// token expiry (docs/STORAGE.md), in steps through the training writer so that training goes on
// between them, or through the training stream in cluster mode so that every daemon takes the
// same steps; and what the model expiry's passes did (core/model_expiry.h runs them).
//
//   filter.Upkeep().RetireLedgerAsync(learned_before, [](auto retired) { ... });
//   auto dropped = filter.Upkeep().ExpireTokens(rule);   // blocks (tests, the hourly pass)
//
// Thread safety: every method may be called from any thread. The steps' completions run on the
// writer's thread (or the stream's reader's); the blocking forms must not be called from there.
#ifndef NBSPAMD_CORE_MODEL_UPKEEP_H_
#define NBSPAMD_CORE_MODEL_UPKEEP_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "common/error.h"
#include "core/service_status.h"
#include "core/training_log.h"
#include "core/training_writer.h"
#include "storage/store.h"

namespace nbspamd::core {

// The number of ledger records a RetireLedgerAsync retired.
using RetireLedgerDone = std::move_only_function<void(std::expected<std::uint64_t, Error>)>;

// The tokens ExpireTokensAsync dropped.
using ExpireTokensDone = std::move_only_function<void(std::expected<std::uint64_t, Error>)>;

// The most ledger records one step of the ledger retention retires, and the most base records
// one step of the token expiry looks at: each step is one write that holds up training for a few
// milliseconds (bench/expiry_steps_benchmark.cc: medians about 3 ms). A step's cost grows faster
// than its size (a retire step of 4 records took 18 ms, 4 of 1 record 10 ms).
inline constexpr std::size_t kRetireStepRecords = 1;
// In cluster mode, the most steps of the ledger retention one pass appends to the training stream
// (of the global ledger, and again of the users'): an hourly pass retires up to 240,000 records a
// day of each, 24 times a busy site's mail, so a backlog (retention turned on after years) is
// caught up over days without a pass holding millions of changes.
inline constexpr std::size_t kClusterRetireStepsPerPass = 10000;
inline constexpr std::size_t kExpiryStepTokens = 512;

class ModelUpkeep {
 public:
  // `log` is read at each call: null in standalone use, set (SpamFilter::EnableReplication)
  // before serving in cluster mode. All three must outlive this.
  ModelUpkeep(storage::Store& store, TrainingWriter& writer,
              const std::unique_ptr<TrainingLog>& log)
      : store_(store), writer_(writer), log_(log) {}
  ModelUpkeep(const ModelUpkeep&) = delete;
  ModelUpkeep& operator=(const ModelUpkeep&) = delete;

  // The ledger retention (docs/STORAGE.md "Ledger retention"): retires every global ledger
  // record learned before `learned_before` (Unix seconds) through the training writer, in steps
  // of kRetireStepRecords (Store::RetireLedger), and then every user ledger record learned before
  // it (Store::RetireUserLedgers), so training goes on between them. `done` gets how many it
  // retired (global and users' records), on the writer's thread. In cluster mode the same steps go
  // through the training stream, one change each (TrainingChange::kRetireStep, cut where this
  // daemon's ledger says: Store::RetireStepStarts), which every daemon applies alike; `done` then
  // answers 0 once the stream has them all. Errors: kFailedPrecondition for a
  // store without a ledger retention; storage's; kUnavailable after StopTraining or when the stream
  // cannot be reached (the steps written before stay).
  void RetireLedgerAsync(std::int64_t learned_before, RetireLedgerDone done);
  // RetireLedgerAsync, waiting for the outcome (never from a training completion).
  [[nodiscard]] std::expected<std::uint64_t, Error> RetireLedger(std::int64_t learned_before);
  // Ledger records retired since start.
  [[nodiscard]] std::uint64_t RetiredRecords() const { return writer_.RetiredRecords(); }

  // The token expiry (docs/STORAGE.md "Token expiry"): drops every token `rule` selects
  // (Store::ExpireTokens) through the training writer, in steps of kExpiryStepTokens base
  // records, so training goes on between them. `done` gets how many it dropped, on the writer's
  // thread. In cluster mode the steps go through the training stream (TrainingChange::kExpire,
  // over equal ranges of the hash space) and `done` answers 0 once the stream has them all.
  // Errors: as RetireLedgerAsync.
  void ExpireTokensAsync(const storage::TokenExpiryRule& rule, ExpireTokensDone done);
  [[nodiscard]] std::expected<std::uint64_t, Error> ExpireTokens(
      const storage::TokenExpiryRule& rule);
  // The token expiry of the user layers: drops from every user's layer the tokens `rule` selects
  // there (Store::ExpireUserTokens, the weight from the user's own counts) through the training
  // writer, in steps of kExpiryStepTokens users' base records. `done` gets how many it dropped.
  // In cluster mode the steps go through the training stream (TrainingChange::kExpireUsers, over
  // ranges of users cut from their layers' sizes, which ListUsers reads: one read a user, on the
  // calling thread) and `done` answers 0 once the stream has them all. Errors: as
  // RetireLedgerAsync.
  void ExpireUserTokensAsync(const storage::TokenExpiryRule& rule, ExpireTokensDone done);
  [[nodiscard]] std::expected<std::uint64_t, Error> ExpireUserTokens(
      const storage::TokenExpiryRule& rule);
  // The tokens `rule` would drop, by the day they were last seen (Store::FindExpiryCandidates).
  [[nodiscard]] std::expected<storage::ExpiryCandidates, Error> FindExpiryCandidates(
      const storage::TokenExpiryRule& rule) const {
    return store_.FindExpiryCandidates(rule);
  }
  // The learned_at of the global ledger's n-th newest live record (Store::NthNewestLearned).
  [[nodiscard]] std::expected<std::optional<std::int64_t>, Error> NthNewestLearned(
      std::uint64_t n) const {
    return store_.NthNewestLearned(n);
  }
  // Writes the store's memory tables into table files (Store::FlushMemoryTables), so that the
  // write-ahead logs a model expiry pass kept can go.
  [[nodiscard]] std::expected<void, Error> FlushMemoryTables() {
    return store_.FlushMemoryTables();
  }
  // What the model expiry did since start; a pass of core/model_expiry.h reports itself here.
  [[nodiscard]] ExpiryFigures Expiry() const;
  void NoteExpiryPass(std::int64_t ended_at, double seconds, bool cap_met, bool age_rule_waiting);

 private:
  storage::Store& store_;
  TrainingWriter& writer_;
  const std::unique_ptr<TrainingLog>& log_;
  mutable std::mutex mutex_;  // Guards passes_.
  ExpiryFigures passes_;      // Its passes, last_pass_end, last_pass_seconds, cap_met.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_MODEL_UPKEEP_H_
