// TrainingLog: the seam between the service core and replication. In cluster mode a train,
// forget or rollback is not applied locally first: SpamFilter submits it to a TrainingLog, which
// delivers it to every daemon (this one included) and applies it through the TrainingWriter it
// was started with. The core knows only this interface; replication/cluster.h implements it over
// a Redis Stream.
//
//   filter.EnableReplication([&](storage::Store& store, TrainingWriter& writer) {
//     return StartMyLog(store, writer);  // std::expected<std::unique_ptr<TrainingLog>, Error>
//   });
//   log.Submit(std::move(change), [](std::expected<Replicated, Error> r) { ... });
#ifndef NBSPAMD_CORE_TRAINING_LOG_H_
#define NBSPAMD_CORE_TRAINING_LOG_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/token_bag.h"
#include "core/replication_status.h"
#include "model/learning.h"
#include "storage/store.h"

namespace nbspamd::core {

// One change to the model as a training log carries it: the tokens, not the message, so that
// every daemon applies identical tokens whatever its tokenizer settings.
//
// A change with a user is to that user's layer, and to the global model as well when
// train_global, as the submitting daemon's train_global_from_users decided: every daemon applies
// it alike whatever its own setting. kDeleteUser removes everything of `user` (id is "").
// kRetire and kExpire carry a step of the model expiry (core/model_expiry.h) with everything that
// decides it, so that every daemon, applying it at the same place in the log, changes its model
// byte for byte alike (id and user are "").
struct TrainingChange {
  enum class Kind : std::uint8_t {
    kLearn = 0,
    kForget = 1,
    kDeleteUser = 2,
    // A pass of the ledger retention, of the global ledger and then of the users' own ones
    // (Store::RetireLedger and Store::RetireUserLedgers, every record at once).
    kRetire = 3,
    kExpire = 4,  // A step of the token expiry (Store::ExpireTokens over [from, until)).
    // A step of the token expiry of the user layers (Store::ExpireUserTokens over the users-family
    // keys [user_expiry_from, user_expiry_until)).
    kExpireUsers = 5,
    // A bounded step of the ledger retention (Store::RetireLedger, or Store::RetireUserLedgers
    // with retire_users): at most retire_max_records records learned before learned_before, from
    // the source index key retire_from on. The submitting daemon cuts a pass into such steps
    // (Store::RetireStepStarts), so that no daemon applies a whole pass in one write.
    kRetireStep = 6,
  };
  Kind kind = Kind::kLearn;
  std::string id;                // kLearn, kForget: never empty.
  std::string label;             // kLearn.
  std::vector<BagEntry> tokens;  // kLearn: sorted by hash, each once.
  model::LearnOrigin origin;     // kLearn.
  // kLearn: counted whatever the training regime (an archive import, POST /train?count=all);
  // else every daemon decides from its own held-out score, alike.
  bool count_all = false;
  std::optional<std::string> only_source;  // kForget of the global model: only a record of this
                                           // source (rollback).
  std::string user;                        // "" for the global model alone; else whose layer.
  bool train_global = false;               // With a user: the global model too.
  // kRetire: the ledger records (global and users') learned before this Unix time are retired.
  // kRetireStep: the same bound.
  std::int64_t learned_before = 0;
  // kRetireStep: the users' ledgers (else the global one), the key to start at ("": the first)
  // and the most records the step retires (never 0).
  bool retire_users = false;
  std::string retire_from;
  std::uint64_t retire_max_records = 0;
  // kExpire: the rule, applied to the base records from token `expiry_from` on and before
  // `expiry_until` (nullopt: to the end). kExpireUsers: the rule too.
  storage::TokenExpiryRule expiry_rule;
  TokenHash expiry_from = 0;
  std::optional<TokenHash> expiry_until;
  // kExpireUsers: the users' base records with keys from `user_expiry_from` on ("": the first)
  // and before `user_expiry_until` (nullopt: to the end).
  std::string user_expiry_from;
  std::optional<std::string> user_expiry_until;

  friend bool operator==(const TrainingChange&, const TrainingChange&) = default;
};

// What became of a submitted change.
struct Replicated {
  std::string stream_id;  // Its position in the log.
  // Once applied here (when the log waits for that): the outcome (a forget reports kLearned);
  // nullopt when the answer came as soon as the log had it.
  std::optional<model::LearnStatus> status;
};
using ReplicatedDone = std::move_only_function<void(std::expected<Replicated, Error>)>;

// Thread safety: Submit and Status from any thread; Stop from one. Copying is not allowed.
class TrainingLog {
 public:
  TrainingLog() = default;
  TrainingLog(const TrainingLog&) = delete;
  TrainingLog& operator=(const TrainingLog&) = delete;
  virtual ~TrainingLog() = default;

  // Appends `change` and calls `done` exactly once, with where the log put it (and, when the
  // log waits for it to be applied here, the outcome or the change's own error, e.g. kNotFound
  // for a forget of an unknown id); kUnavailable when the log cannot be reached, the wait timed
  // out, or the daemon stops. `done` may run on the caller's thread or on the log's own and
  // must be quick.
  virtual void Submit(TrainingChange change, ReplicatedDone done) = 0;

  // The replication state, as plain values.
  [[nodiscard]] virtual ClusterStatus Status() const = 0;

  // Stops delivering changes; waiting submissions get kUnavailable. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_TRAINING_LOG_H_
