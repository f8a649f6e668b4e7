// Store: where the model's counts live, behind one small interface so that backends can be
// swapped without touching model or server. Two implement it: RocksdbStore (the embedded,
// durable default) and MemoryStore (tests, throw-away models).
//
//   model::Snapshot snapshot = store.Read(bag.entries);        // any thread, never blocks
//   std::expected<void, Error> done = store.Apply(delta);      // one writer at a time
//   auto results = store.ApplyBatch(deltas);  // many deltas, one durable write (group commit)
//   store.Checkpoint("backups/b1");            // an online backup, while serving
//
// User layers (docs/STORAGE.md): a Delta with a `user` part changes that user's layer
// (and the global model, when its global part is not empty) in the same atomic write.
//
//   auto user = store.ReadUser("alice", *global.stats, bag.entries);  // nullopt: no layer
//   auto result = model::ClassifyLayered(bag, global, user->value_or(model::EmptyLayerSnapshot(
//                                        *global.stats, bag.entries.size())), options, layer);
#ifndef NBSPAMD_STORAGE_STORE_H_
#define NBSPAMD_STORAGE_STORE_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/token_bag.h"
#include "model/calibration.h"
#include "model/delta.h"
#include "model/model_stats.h"
#include "model/snapshot.h"
#include "storage/write_health.h"

namespace nbspamd::storage {

class ModelVisitor;

// One result per delta of a batch, in the batch's order.
using BatchResults = std::vector<std::expected<void, Error>>;

// One figure of a backend's own, for monitoring: a Prometheus gauge.
struct StorageProperty {
  std::string name;  // "nbspamd_storage_..."
  std::string help;
  double value = 0;
};

// A learned message as ListLearned reports it.
struct LearnedMessage {
  std::string id;
  std::string label;
  model::LearnOrigin origin;
  bool checked = false;  // Only checked (model::LedgerEntry::checked): nothing of it was counted.

  friend bool operator==(const LearnedMessage&, const LearnedMessage&) = default;
};

// A global ledger record as NewestLearned reports it: what the verdict thresholds from feedback
// read (model/feedback_thresholds.h).
struct LearnedRecord {
  std::string id;
  std::string label;
  model::LearnOrigin origin;
  std::optional<model::HeldOutScore> held_out;

  friend bool operator==(const LearnedRecord&, const LearnedRecord&) = default;
};

// One user's layer as ListUsers reports it: its stats, aligned to the current global classes.
struct UserSummary {
  std::string user;
  model::ModelStats stats;
};

// What a backend reports about its user layers, for monitoring.
struct UserLayerFigures {
  std::uint64_t users = 0;          // Users with a layer.
  std::uint64_t cached_layers = 0;  // Layers in memory (users without a layer included).
  std::uint64_t cache_bytes = 0;    // Their memory.
  std::uint64_t cache_hits = 0;     // Reads served from memory.
  std::uint64_t cache_misses = 0;   // Reads that loaded a layer from disk.
};

// What one step of the ledger retention did (Store::RetireLedger).
struct RetireStep {
  std::uint64_t retired = 0;  // Records this step retired.
  bool more = false;          // Records learned before the horizon are left: step again,
  std::string next;           // from this source index key on.
};

// Which tokens the token expiry drops (Store::ExpireTokens; docs/STORAGE.md "Token expiry").
// Only a token no live ledger record holds (its counts are all base counts) is ever dropped,
// and only when each of these holds.
struct TokenExpiryRule {
  // Last seen (the newest retired record that held it; a token without one: 0) before this Unix
  // time.
  std::int64_t seen_before = 0;
  std::uint64_t max_count = 0;  // Its count over every class at most this; 0: any count.
  // Its weight |log P(w|spam) - log P(w|ham)| (with `alpha`) below this; 0: any weight.
  double keep_weight = 0;
  double alpha = 1.0;
  // Keep every token counted in ham at all (a site's own rare words), whatever its age or
  // weight: only tokens seen in no ham may go.
  bool keep_ham = false;

  friend bool operator==(const TokenExpiryRule&, const TokenExpiryRule&) = default;
};

// What one step of the token expiry did.
struct TokenExpiryStep {
  std::uint64_t examined = 0;     // Base records looked at.
  std::uint64_t dropped = 0;      // Tokens dropped.
  std::optional<TokenHash> next;  // Where the next step starts; nullopt: the pass is done.
};

// What one step of the token expiry of the user layers did (Store::ExpireUserTokens).
struct UserTokenExpiryStep {
  std::uint64_t examined = 0;  // Users' base records looked at.
  std::uint64_t dropped = 0;   // Tokens dropped from user layers (one user's token: one).
  // The users-family key where the next step starts; nullopt: the pass (or range) is done.
  std::optional<std::string> next;
};

// The weight TokenExpiryRule::keep_weight is compared with: |log P(w|spam) - log P(w|ham)| of a
// token counted `counts` in a layer of stats `stats` (the global model's, or a user layer's own:
// its n_cu and |V_u|), with Laplace smoothing `alpha`; 0 when the layer lacks spam or ham.
[[nodiscard]] double ExpiryWeight(const std::vector<std::uint64_t>& counts,
                                  const model::ModelStats& stats, double alpha);

// Whether `rule` keeps a token counted `counts` in a layer of stats `stats` whatever its age and
// count: it weighs at least rule.keep_weight (when that is above 0), or rule.keep_ham and the
// layer counted it in ham.
[[nodiscard]] bool ExpiryKeeps(const TokenExpiryRule& rule,
                               const std::vector<std::uint64_t>& counts,
                               const model::ModelStats& stats);

// Tokens the token expiry could drop, by the day (Unix time / 86400) they were last seen.
using ExpiryCandidates = std::map<std::int64_t, std::uint64_t>;

// The default per-user limit on distinct tokens (a store option; 0: none).
inline constexpr std::uint64_t kDefaultUserTokenLimit = 100'000;

// Thread safety: Read, Stats and FindLearned may be called from any number of threads at once,
// also while Apply or ApplyBatch runs; they never wait for it. Apply and ApplyBatch calls must be
// serialised by the caller (training goes through one writer, so |V| and the totals stay exact).
class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  virtual ~Store() = default;

  // The stats and the per-class counts of `entries`' tokens, all from one model state: the
  // state before or after any Apply, never in between. Reads memory only.
  [[nodiscard]] virtual model::Snapshot Read(std::span<const BagEntry> entries) const = 0;

  // The current stats.
  [[nodiscard]] virtual std::shared_ptr<const model::ModelStats> Stats() const = 0;

  // The feedback histogram of every ledger record's held-out score (the calibration record), as
  // the last Apply left it; kept exact by the deltas' feedback_changes. Not fitted here:
  // spam_confidence is fitted on the newest records' scores (core::RecentFeedback). Reads memory
  // only; never waits.
  [[nodiscard]] virtual std::shared_ptr<const model::FeedbackHistogram> Feedback() const = 0;

  // What the training ledger holds for message `id`: nullopt when it was never learned.
  // Errors: kDataLoss for a corrupt record, kInternal for an I/O failure.
  [[nodiscard]] virtual std::expected<std::optional<model::LedgerEntry>, Error> FindLearned(
      std::string_view id) const = 0;

  // The messages whose ledger record was learned through `source` at a time in [since, until),
  // oldest first (then by id), at most `limit` of them. Errors: as FindLearned.
  [[nodiscard]] virtual std::expected<std::vector<LearnedMessage>, Error> ListLearned(
      std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit) const = 0;

  // The newest `limit` records of the global ledger, by (origin.learned_at, id), newest first;
  // records learned through model::kAutolearnSource are left out (they are no feedback). Reads
  // the source index and one record per result. Errors: as FindLearned.
  [[nodiscard]] virtual std::expected<std::vector<LearnedRecord>, Error> NewestLearned(
      std::size_t limit) const = 0;

  // Applies `deltas` in order, as if applied one by one, but in one atomic, durable write (for
  // RocksdbStore: one WriteBatch, one synced write to the write-ahead log) and made visible to
  // Read at once. Each delta is checked against the state the deltas before it leave; one that
  // fails gets its own error and is left out, and the others are applied:
  //   kDataLoss when the delta would drive a count below zero or names an unknown class, or when
  //     an earlier delta of the batch with the same ledger id failed (it was planned on the
  //     record that one would have written);
  //   kInternal when it creates a class that exists already.
  // Returns one result per delta once the accepted ones are durable and visible.
  // Errors, when nothing of the batch is applied: kInsufficientStorage when the disk is full and
  // kUnavailable for another fault of the machine (an I/O error, a read-only file system). After
  // such a fault the store writes nothing more, and answers every ApplyBatch and Checkpoint with
  // the same error at once, until Recover succeeds (see Health).
  [[nodiscard]] virtual std::expected<BatchResults, Error> ApplyBatch(
      std::span<const model::Delta> deltas) = 0;

  // Applies one delta: ApplyBatch of `delta` alone, all of it or none of it, with its error.
  [[nodiscard]] std::expected<void, Error> Apply(const model::Delta& delta) {
    auto results = ApplyBatch(std::span<const model::Delta>(&delta, 1));
    if (!results) return std::unexpected(std::move(results.error()));
    return std::move(results->front());
  }

  // The replication position stored by the last Apply that carried one ("" if none).
  [[nodiscard]] virtual std::string StreamPosition() const = 0;

  // The backend's figures (size on disk, pending background work); thread-safe.
  [[nodiscard]] virtual std::vector<StorageProperty> Properties() const = 0;

  // Writes a consistent copy of the model into the new folder `path` while reads and applies go
  // on: a folder that RocksdbStore::Open reads as the model at one moment, with every apply that
  // returned before the call. Thread-safe.
  // Errors: kInvalidArgument when `path` exists already, kFailedPrecondition for a backend that
  // keeps nothing on disk, kInternal for an I/O failure (then `path` is not left half-written),
  // the write fault's error while writes are stopped.
  [[nodiscard]] virtual std::expected<void, Error> Checkpoint(const std::string& path) = 0;

  // Writes what the memory tables hold into table files, so that the write-ahead logs they kept
  // can go: after a pass of the model expiry, whose retire and drop writes touch families that
  // training writes seldom (a log goes only once every family has flushed what it holds in it).
  // Changes no record. Waits for the flush; thread-safe, applies go on meanwhile. Errors: as
  // Checkpoint's writes; a backend with nothing on disk does nothing.
  [[nodiscard]] virtual std::expected<void, Error> FlushMemoryTables() { return {}; }

  // Whether writes are possible, the fault that stopped them, and the fault counters.
  // Thread-safe; never waits for a write.
  [[nodiscard]] virtual WriteHealth Health() const { return {}; }

  // After a fault: tries once to make writes possible again (RocksdbStore reopens its database)
  // and returns whether they are. Nothing is lost either way: what was acknowledged stays, and
  // a write that failed is either wholly in the model or wholly not. Does nothing while writable.
  // Thread-safe; waits for a running ApplyBatch. Errors: the fault's error while it lasts.
  [[nodiscard]] virtual std::expected<void, Error> Recover() { return {}; }

  // User layers. A backend without them (the default implementations) answers every call with
  // kFailedPrecondition, and ApplyBatch refuses deltas with a user part the same way. In every
  // call `user` must pass model::CheckUserId, else kInvalidArgument. Thread safety: as Read and
  // FindLearned for the reads, as ApplyBatch (serialised) for DeleteUser.

  // The snapshot of `user`'s layer for `entries`, aligned to `global` (the stats of the global
  // snapshot it is scored with: its classes, in its order); nullopt when the user has no layer
  // (ClassifyLayered with model::EmptyLayerSnapshot then scores as the global model). A layer in
  // memory is read without I/O; else the user's records are loaded with one prefix scan.
  // Errors: kDataLoss for a corrupt record, kInternal for an I/O failure.
  [[nodiscard]] virtual std::expected<std::optional<model::Snapshot>, Error> ReadUser(
      std::string_view user, const model::ModelStats& global,
      std::span<const BagEntry> entries) const;

  // The user layer's stats, aligned to the current global classes (vocabulary_size is the
  // user's distinct tokens); nullopt when the user has no layer. Errors: as ReadUser.
  [[nodiscard]] virtual std::expected<std::optional<model::ModelStats>, Error> UserStats(
      std::string_view user) const;

  // The users with a layer, in byte order of their ids, from the first after `after` ("": the
  // first), at most `limit`, each with its stats. Reads the stats records only, never a layer's
  // tokens. Errors: kDataLoss for a corrupt record, kInternal for an I/O failure.
  [[nodiscard]] virtual std::expected<std::vector<UserSummary>, Error> ListUsers(
      std::string_view after, std::size_t limit) const;

  // Every user with a layer, in byte order of their ids: ListUsers a page of 1,000 at a time.
  // Errors: as ListUsers.
  [[nodiscard]] std::expected<std::vector<UserSummary>, Error> ListAllUsers() const;

  // What `user`'s own ledger holds for message `id`: nullopt when the user never learned it.
  // Errors: as FindLearned.
  [[nodiscard]] virtual std::expected<std::optional<model::LedgerEntry>, Error> FindUserLearned(
      std::string_view user, std::string_view id) const;

  // ListLearned in `user`'s ledger: the user's records learned through `source` in [since,
  // until), oldest first, at most `limit`. Errors: as ListLearned.
  [[nodiscard]] virtual std::expected<std::vector<LearnedMessage>, Error> ListUserLearned(
      std::string_view user, std::string_view source, std::int64_t since, std::int64_t until,
      std::size_t limit) const;

  // The newest learned_at among `user`'s own ledger records, retired ones included: when the user
  // last taught the layer. nullopt when the user has no ledger record (no layer, or only restored
  // base counts). Reads the user's source index keys, and the user's ledger records only when no
  // live record is left. Errors: as ListUserLearned.
  [[nodiscard]] virtual std::expected<std::optional<std::int64_t>, Error> UserLastLearned(
      std::string_view user) const;

  // Removes every record of `user` (layer, ledger, source index) in one durable write, with
  // `stream_position` when not empty, and drops the layer from memory. Deleting a user without
  // a layer succeeds and changes nothing else. Errors: as ApplyBatch's whole-batch errors.
  [[nodiscard]] virtual std::expected<void, Error> DeleteUser(
      std::string_view user, std::string_view stream_position = "");

  // Gives `visitor` the whole model, the global layer and then each user's, as it is at one
  // moment (storage/model_transfer.h), while reads and applies go on. Thread-safe. Errors:
  // kFailedPrecondition for a backend without it; kDataLoss for a corrupt record, kInternal for
  // an I/O failure; the visitor's (which stop it).
  [[nodiscard]] virtual std::expected<void, Error> Export(ModelVisitor& visitor) const;

  // Ledger retention (docs/STORAGE.md "Ledger retention"): retires at most `max_records` (0: no
  // limit) of the global ledger's records learned before `learned_before` (Unix seconds), taken
  // source by source in byte order and oldest first within a source. A retired record's token
  // counts and document move to the base counts, its source index entry goes, and it keeps only its
  // label, origin and held-out score (model::LedgerEntry::retired). No count, stats, |V| or
  // calibration changes, so neither does a score. One atomic, durable write (with `stream_position`
  // when not empty); the same state and arguments retire the same records on every daemon.
  // Serialised as ApplyBatch. Errors: kFailedPrecondition for a backend without it; as ApplyBatch's
  // whole-batch errors; kDataLoss for a corrupt record.
  // `from`: the source index key to start at (a step's `next`; "": the first).
  [[nodiscard]] virtual std::expected<RetireStep, Error> RetireLedger(
      std::int64_t learned_before, std::size_t max_records, std::string_view stream_position = "",
      std::string_view from = "");

  // Token expiry (docs/STORAGE.md "Token expiry"): looks at up to `max_examined` tokens with base
  // counts (0: no limit), from token `from` on in key order and before token `until` (when given),
  // and drops each that `rule` selects: its token record, base counts and last-seen record go, n_c
  // and |V| shrink by what it had, in one atomic, durable write (with `stream_position` when not
  // empty) that Read sees at once. No ledger record holds a dropped token, so every forget stays
  // exact. The same state and arguments drop the same tokens. Serialised as ApplyBatch. Errors: as
  // RetireLedger.
  [[nodiscard]] virtual std::expected<TokenExpiryStep, Error> ExpireTokens(
      const TokenExpiryRule& rule, TokenHash from, std::size_t max_examined,
      std::optional<TokenHash> until = std::nullopt, std::string_view stream_position = "");

  // Ledger retention of the user layers (docs/STORAGE.md "Ledger retention"): as RetireLedger,
  // over every user's own ledger, user by user in byte order of their ids, source by source and
  // oldest first within a source. A retired user record's counts and document move to that
  // user's base counts (and its last-seen times to the user's), its source index entry goes, and
  // it keeps its label and origin: no count of the layer, its stats or |V_u| changes, so neither
  // does any score. `from`: the users-family key to start at (a step's `next`; "": the first
  // user). Serialised as ApplyBatch. Errors: as RetireLedger.
  [[nodiscard]] virtual std::expected<RetireStep, Error> RetireUserLedgers(
      std::int64_t learned_before, std::size_t max_records, std::string_view stream_position = "",
      std::string_view from = "");

  // Token expiry of the user layers (docs/STORAGE.md "Token expiry"): looks at up to
  // `max_examined` (0: no limit) of the users' base records whose users-family keys lie in
  // [from, until) ("" and nullopt: from the first, to the last), user by user and by token, and
  // drops each token `rule` selects from its user's layer: a token of the user that no live
  // record of the user's ledger holds, last seen (by the user's retired records) before
  // rule.seen_before, with a count at most rule.max_count and ExpiryWeight below
  // rule.keep_weight, both from the user's own counts and stats. Its token, base and last-seen
  // records go, and the user's n_cu and |V_u| shrink by what it had, in one atomic write (with
  // `stream_position` when not empty) that ReadUser sees at once. The global model is untouched.
  // The same state and arguments drop the same tokens. Serialised as ApplyBatch. Errors: as
  // RetireLedger.
  [[nodiscard]] virtual std::expected<UserTokenExpiryStep, Error> ExpireUserTokens(
      const TokenExpiryRule& rule, std::string_view from, std::size_t max_examined,
      const std::optional<std::string>& until = std::nullopt,
      std::string_view stream_position = "");

  // A pass of the ledger retention cut into steps of `records_per_step` records (> 0), as the
  // records are now: the `from` of each step after the first (the first starts at ""), for
  // RetireLedger or, with `users`, RetireUserLedgers; at most `max_starts` of them (0: all), the
  // records past the last step's left for a later pass. In cluster mode each step goes through
  // the training stream on its own (TrainingChange::kRetireStep), so that every daemon retires the
  // same records in writes of a bounded size. Reads one snapshot; thread-safe. Errors:
  // kInvalidArgument for records_per_step 0; as RetireLedger.
  [[nodiscard]] virtual std::expected<std::vector<std::string>, Error> RetireStepStarts(
      std::int64_t learned_before, std::size_t records_per_step, bool users,
      std::size_t max_starts = 0) const;

  // The tokens `rule` would drop if seen_before were unbounded, by the day they were last seen:
  // what a size cap chooses its horizon from. Reads one snapshot; thread-safe. Errors: as
  // RetireLedger.
  [[nodiscard]] virtual std::expected<ExpiryCandidates, Error> FindExpiryCandidates(
      const TokenExpiryRule& rule) const;

  // The learned_at of the n-th newest live (not retired) record of the global ledger, n >= 1:
  // at least n of its messages were learned at that time or later. nullopt when it holds fewer.
  // What the token expiry's count of messages starts from after a restart. Reads one snapshot;
  // thread-safe. Errors: as RetireLedger.
  [[nodiscard]] virtual std::expected<std::optional<std::int64_t>, Error> NthNewestLearned(
      std::uint64_t n) const;

  // Monitoring figures of the user layers; thread-safe, never waits for a write.
  [[nodiscard]] virtual UserLayerFigures UserFigures() const { return {}; }

  // Calls visit(hash, counts) for every token of the global model's in-memory counts (counts by
  // class, without trailing zeros; valid for the call only), in no particular order: what the
  // strongest tokens are chosen from (core/model_knowledge.h). Reads memory only; readers go on,
  // and an ApplyBatch waits at most for one part of the visit (CountCache::ForEachToken), so
  // `visit` must be quick. Tokens changed by an ApplyBatch during the visit may be seen before or
  // after it. Thread-safe. Errors: kFailedPrecondition for a backend without it.
  using TokenVisitor = std::function<void(TokenHash, std::span<const std::uint64_t>)>;
  [[nodiscard]] virtual std::expected<void, Error> VisitTokens(const TokenVisitor& visit) const;
};

// The classes a new, empty model starts with.
inline constexpr std::string_view kDefaultLabels[] = {"spam", "ham"};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_STORE_H_
