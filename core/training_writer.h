// TrainingWriter: the one writer of a Store, with group commit. Any thread submits a learn or a
// forget (already tokenized) with a completion; one writer thread takes everything queued (up to
// a cap), plans each request in order against the state the earlier requests of the same group
// leave, writes the whole group with one Store::ApplyBatch (one synced write), and then
// completes each request with its own outcome. A request that finds the writer idle is written
// at once, alone: nothing waits for companions; requests that arrive while a write is under way
// form the next group.
//
//   TrainingWriter writer(store);
//   writer.Learn({.id = "m1", .label = "spam", .bag = bag},
//                [](std::expected<model::LearnStatus, Error> learned) { ... });  // writer thread
//
// The model is exactly the one that applying the requests one by one, in the order the writer
// took them, gives: FindLearned and the class list are read through the group's own changes, so
// relearning or forgetting an id learned earlier in the same group behaves as if sequential.
//
// Held-out scores. A learn of a new id records in its ledger record the score the model gave the
// message just before learning it (model::HeldOutScore, the feedback that calibrates
// spam_confidence). The writer computes it while planning, against the model as the group's
// earlier requests leave it (PendingModel), so it too is what applying the requests one by one
// gives, whatever the grouping: a replay in the same order, or another daemon of a cluster
// applying the same stream, records the same scores bit for bit (given the same alpha). A
// relearn keeps the score of the first learn.
//
// A record the ledger retention retired (global or a user's) can be neither forgotten nor
// learned as another class: such a request fails with kExpired and changes nothing.
//
// User layers (model/user_layer.h). LearnForUser and ForgetForUser change a user's
// layer and ledger, and the global model too when the target says so, in one delta (one atomic
// write). A group is exact for user records as for global ones: the user ledger is read through
// the group's own changes, per user and id. DeleteUser is written alone, between groups, so it is
// serialised with every learn and forget: those queued before it are written before it, those
// queued after it after it.
//
// Requests that carry a stream position (cluster mode) store the last position of their group in
// the group's write, also when none of them changes a count (an unchanged learn, a forget of an
// unknown id), so a restart resumes exactly after the last event written.
#ifndef NBSPAMD_CORE_TRAINING_WRITER_H_
#define NBSPAMD_CORE_TRAINING_WRITER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "common/error.h"
#include "common/log_throttle.h"
#include "common/token_bag.h"
#include "core/recent_feedback.h"
#include "model/classifier.h"
#include "model/learning.h"
#include "storage/store.h"

namespace nbspamd::core {

// Learn `bag` as `label` under message id `id`.
struct LearnRequest {
  std::string id;
  std::string label;  // REQUIRES: a valid label (SpamFilter::ValidateLabel).
  TokenBag bag;
  model::LearnOrigin origin;  // Recorded with the ledger record when it changes.
  // Counted whatever the training regime (TrainingRegime): a bulk import that must count all.
  bool count_all = false;
};

// Whose layer a user request changes, and whether it changes the global model as well.
struct UserTarget {
  std::string user;           // REQUIRES: model::CheckUserId(user).
  bool train_global = false;  // Also learn (or forget) the message in the global model.
};

// Completions run on the writer thread, once the request's outcome is durable (or failed). They
// must be quick and must not submit to the writer and wait: hand the result to another thread.
using LearnCompletion = std::move_only_function<void(std::expected<model::LearnStatus, Error>)>;
using ForgetCompletion = std::move_only_function<void(std::expected<void, Error>)>;
using RetireCompletion = std::move_only_function<void(std::expected<storage::RetireStep, Error>)>;
using ExpireCompletion =
    std::move_only_function<void(std::expected<storage::TokenExpiryStep, Error>)>;
using UserExpireCompletion =
    std::move_only_function<void(std::expected<storage::UserTokenExpiryStep, Error>)>;

// Which ledgers a step of the ledger retention retires records of.
enum class RetireScope {
  kGlobal,  // The global ledger (Store::RetireLedger).
  kUsers,   // The users' own ledgers (Store::RetireUserLedgers).
  kAll,     // Both, the global one first: a whole pass of a cluster's retire event.
};

// How large a group may grow. At least one request is always taken, whatever its size.
struct GroupLimits {
  std::size_t max_requests = 256;
  std::size_t max_tokens = std::size_t{1} << 20;  // Distinct tokens summed over the bags.
};

// How held-out scores are computed: with the alpha, score_min_weight, score form and n-gram share
// of the score /classify
// gives (model::ClassifyOptions), so that spam_confidence is fitted on the scale it is applied to.
struct HeldOutScoring {
  double alpha = 1.0;
  double score_min_weight = 0.0;
  model::ScoreForm score_form = model::ScoreForm::kMeanWeight;
  double char_ngram_share = 0.0;
};

// Which fed-back messages are counted (docs/API.md "Training regime"). Learn every message, or
// train on or near error: a learn of a new id labelled spam or ham is scored first (its held-out
// score, the score /classify gives) and counted only when the model was wrong or within `margin`
// of 0 (spam counted when score <= margin, ham when score >= -margin); otherwise its ledger record
// is only checked (model::LedgerEntry::checked), status kChecked. A checked id learned again with
// the same label is scored again and counted when it now falls within the margin (a pass of bulk
// training), else answered kChecked again with nothing written. A correction (another label than
// its record's) is always counted: it was an error. A message the model cannot score yet (a class
// without documents), or of another class, is counted. The decision reads only the model as the
// requests before it in the writer's order leave it, so every daemon of a cluster applying the same
// stream with the same regime decides the same. User layers learn every message: the regime decides
// only what the global model counts.
//
// Warm-up: with `warmup_documents` N, a message of a class that holds fewer than N documents is
// counted whatever its score, so that each class starts from a broad base of evidence before the
// regime counts only mistakes (docs/ACCURACY.md "Cold start").
struct TrainingRegime {
  std::optional<double> margin;  // nullopt: learn every message. REQUIRES: >= 0.
  std::uint64_t warmup_documents = 0;

  // Whether a message labelled `label` that the model scored `score` (nullopt: none) is counted,
  // when its class holds `class_documents` documents.
  [[nodiscard]] bool Counts(std::string_view label, std::optional<double> score,
                            std::uint64_t class_documents) const {
    if (!margin || !score || class_documents < warmup_documents) return true;
    if (label == "spam") return *score <= *margin;
    if (label == "ham") return *score >= -*margin;
    return true;
  }
};

// Thread safety: Learn, Forget and Stop from any thread. The writer thread is the only caller
// of the store's FindLearned-then-ApplyBatch sequence, so nothing else may apply to the store
// while the writer lives.
class TrainingWriter {
 public:
  // `scoring`: how held-out scores are computed (the daemon's alpha and score_min_weight);
  // `regime`: which learns are counted; `recent`, when not null, is loaded from the store here
  // and told of every write (RecentFeedback::Applied); it must outlive the writer.
  explicit TrainingWriter(storage::Store& store, GroupLimits limits = {},
                          HeldOutScoring scoring = {}, TrainingRegime regime = {},
                          RecentFeedback* recent = nullptr);
  TrainingWriter(const TrainingWriter&) = delete;
  TrainingWriter& operator=(const TrainingWriter&) = delete;
  ~TrainingWriter();  // Stop().

  // Queues a learn. `done` gets the status, or kInternal / kDataLoss from storage, or
  // kUnavailable (at once, on the caller's thread) after Stop. `stream_position` (cluster mode)
  // is the replication stream entry the request comes from, stored in the same write as its
  // counts (Store::StreamPosition); "" in standalone use.
  void Learn(LearnRequest request, LearnCompletion done, std::string stream_position = "");
  // Queues a forget of message `id`. `done` gets kNotFound when nothing is learned under it, or
  // when `only_source` is given and the record was learned through another source; else as for
  // Learn.
  // `stream_position` as in LearnRequest.
  void Forget(std::string id, ForgetCompletion done,
              std::optional<std::string> only_source = std::nullopt,
              std::string stream_position = "");

  // Learn in `target.user`'s layer (and in the global model when target.train_global). `done`
  // gets the status of the user's layer (kUnchanged when the user's record already has the
  // label), else errors as for Learn. The global part keeps its own ledger and held-out scores.
  void LearnForUser(LearnRequest request, UserTarget target, LearnCompletion done,
                    std::string stream_position = "");
  // Forgets message `id` from `target.user`'s layer (and, when target.train_global, from the
  // global model if the global ledger holds it). `done` gets kNotFound when the user's ledger
  // does not hold `id`, or when `only_source` is given and the user's record was learned
  // through another source (the global record is then forgotten only if it too was learned
  // through `only_source`); else as for Forget.
  void ForgetForUser(std::string id, UserTarget target, ForgetCompletion done,
                     std::optional<std::string> only_source = std::nullopt,
                     std::string stream_position = "");
  // Removes every record of `user` (Store::DeleteUser), serialised with the other requests.
  // Deleting a user with no layer succeeds. Errors: as Store::DeleteUser; kUnavailable after Stop.
  // `stream_position` of these three as in Learn.
  void DeleteUser(std::string user, ForgetCompletion done, std::string stream_position = "");

  // Retires at most `max_records` ledger records learned before `learned_before` (Unix seconds;
  // Store::RetireLedger, or Store::RetireUserLedgers for the users' ledgers: a step of the ledger
  // retention) of the ledgers `scope` names, serialised with the other requests as DeleteUser is.
  // kAll is two writes, the global one first, with `stream_position` in the second; the step's
  // `retired` counts both. Errors: as Store::RetireLedger; kUnavailable after Stop.
  // `from`: as in Store::RetireLedger (for kUsers: in Store::RetireUserLedgers).
  // REQUIRES: for kAll, max_records == 0 and from == "" (a whole pass).
  void RetireLedger(std::int64_t learned_before, std::size_t max_records, RetireCompletion done,
                    std::string stream_position = "", std::string from = "",
                    RetireScope scope = RetireScope::kGlobal);

  // One step of the token expiry (Store::ExpireTokens), serialised as RetireLedger.
  void ExpireTokens(const storage::TokenExpiryRule& rule, TokenHash from, std::size_t max_examined,
                    std::optional<TokenHash> until, ExpireCompletion done,
                    std::string stream_position = "");
  // One step of the token expiry of the user layers (Store::ExpireUserTokens), serialised as
  // RetireLedger.
  void ExpireUserTokens(const storage::TokenExpiryRule& rule, std::string from,
                        std::size_t max_examined, std::optional<std::string> until,
                        UserExpireCompletion done, std::string stream_position = "");

  // Ledger records retired and tokens dropped through this writer (RetireLedger, ExpireTokens),
  // for /metrics.
  [[nodiscard]] std::uint64_t RetiredRecords() const {
    return retired_records_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t DroppedTokens() const {
    return dropped_tokens_.load(std::memory_order_relaxed);
  }
  // The same for the user layers (RetireLedger of the users' ledgers, ExpireUserTokens).
  [[nodiscard]] std::uint64_t RetiredUserRecords() const {
    return retired_user_records_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t DroppedUserTokens() const {
    return dropped_user_tokens_.load(std::memory_order_relaxed);
  }

  // Finishes every request queued so far (their completions run), then stops the writer thread.
  // Later requests fail with kUnavailable. Idempotent.
  void Stop();

  // Groups written and requests completed so far, for diagnostics and benchmarks.
  [[nodiscard]] std::uint64_t GroupCount() const;
  [[nodiscard]] std::uint64_t RequestCount() const;
  // Completions that threw (a bug in the caller's callback): each is logged (rate-limited) and
  // the other completions still run. For /metrics.
  // Groups (and requests being queued) whose writing threw, whatever it threw: each request of
  // the group failed with kInternal, and the writer went on (noted, for /metrics).
  [[nodiscard]] std::uint64_t GroupExceptions() const {
    return group_exceptions_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t CompletionExceptions() const {
    return completion_exceptions_.load(std::memory_order_relaxed);
  }

 private:
  enum class Kind { kLearn, kForget, kDeleteUser, kRetire, kExpire, kExpireUsers };
  struct Request {
    Kind kind = Kind::kLearn;
    std::string id;
    std::string label;  // "" unless a learn.
    TokenBag bag;
    model::LearnOrigin origin;
    bool count_all = false;  // A learn: counted whatever the regime.
    std::variant<LearnCompletion, ForgetCompletion, RetireCompletion, ExpireCompletion,
                 UserExpireCompletion>
        done;
    std::optional<std::string> only_source;  // A forget: only a record of this source.
    std::string stream_position;             // "" for none.
    std::string user;                        // "" for the global model only; else whose layer.
    bool train_global = true;                // With a user: also the global model.
    std::int64_t retire_before = 0;          // kRetire: the horizon, and where to start.
    std::string retire_from;
    RetireScope retire_scope = RetireScope::kGlobal;
    // kRetire: the most records to retire; kExpire: the most base records to look at.
    std::size_t retire_max = 0;
    storage::RetireStep retired;           // kRetire: what the step did, once written.
    storage::TokenExpiryRule expiry_rule;  // kExpire: the rule, and where to start.
    TokenHash expiry_from = 0;
    std::optional<TokenHash> expiry_until;
    storage::TokenExpiryStep expired;  // kExpire: what the step did, once written.
    std::string user_expiry_from;      // kExpireUsers: the users-family key range.
    std::optional<std::string> user_expiry_until;
    storage::UserTokenExpiryStep user_expired;  // kExpireUsers: what the step did.
  };
  using Result = std::expected<model::LearnStatus, Error>;  // A forget reports kLearned.

  void Submit(Request request);
  void Run();
  // Plans and writes `group`, returning each request's result.
  [[nodiscard]] std::vector<Result> Commit(const std::vector<Request>& group);
  // Writes a group of one DeleteUser request.
  [[nodiscard]] Result CommitDeleteUser(const Request& request);
  // Writes a group of one RetireLedger request, keeping its step in request.retired.
  [[nodiscard]] Result CommitRetire(Request& request);
  // Writes a group of one ExpireTokens request, keeping its step in request.expired.
  [[nodiscard]] Result CommitExpire(Request& request);
  // Writes a group of one ExpireUserTokens request, keeping its step in request.user_expired.
  [[nodiscard]] Result CommitExpireUsers(Request& request);
  // Runs the request's completion with `result`; an exception it throws is logged and counted.
  void Complete(Request& request, Result result) noexcept;

  storage::Store& store_;
  const GroupLimits limits_;
  const HeldOutScoring scoring_;
  const TrainingRegime regime_;
  RecentFeedback* const recent_;  // Null: none. Only the writer thread calls it after the ctor.
  // The group being written. Only the writer thread (Run) touches it. A member rather than a
  // local of Run, so that its buffer is reachable from this object while the thread waits: leak
  // checkers scanning a waiting thread's (ASan fake) stack frames need not find it there.
  std::vector<Request> group_;
  std::mutex stop_mutex_;     // Serialises Stop's join.
  mutable std::mutex mutex_;  // Guards the members below it.
  std::condition_variable wake_;
  std::deque<Request> queue_;
  bool stopping_ = false;
  std::uint64_t groups_ = 0;
  std::uint64_t requests_ = 0;
  std::atomic<std::uint64_t> completion_exceptions_ = 0;
  std::atomic<std::uint64_t> group_exceptions_ = 0;
  std::atomic<std::uint64_t> retired_records_ = 0;
  std::atomic<std::uint64_t> dropped_tokens_ = 0;
  std::atomic<std::uint64_t> retired_user_records_ = 0;
  std::atomic<std::uint64_t> dropped_user_tokens_ = 0;
  LogThrottle completion_log_;
  std::thread thread_;  // Last: starts once everything above is constructed.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_TRAINING_WRITER_H_
