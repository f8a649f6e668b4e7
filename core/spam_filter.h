// SpamFilter: the daemon's operations (classify, train, forget, stats) on plain values, with no
// HTTP in sight. It wires tokenizer → model ← storage and owns the one-writer rule for training:
// training requests are tokenized on the caller's thread and then go through one
// TrainingWriter, which commits them in groups (one synced write for many requests).
//
//   SpamFilter filter(std::move(store), options);
//   auto verdict = filter.Classify(message_bytes, /*explain=*/5);
//   filter.TrainAsync({.message = message_bytes, .label = "spam", .id = id, .source = token},
//                     [](auto learned) { ... });                   // runs when it is durable
//   auto learned = filter.Train(message_bytes, "spam", /*id=*/std::nullopt);  // blocks (tests)
//
// It is the one core every front end (HTTP, milter, spamd) calls, and it owns what they share:
// message ids (the id a front end gives, e.g. a Message-ID, else the content id it computes),
// the verdict memory behind feedback, validation, and readiness. A front end classifies with
// Classify(message, explain, id) and gets the id back in ClassifyOutcome::id; a later
// TrainAsync({.message, .label, .id, .source, .user}, done) of the same id reports in
// TrainOutcome::feedback whether that verdict was right. A front end only turns its protocol
// into these calls and the outcomes (and Error codes) back into its protocol.
//
// The jobs an administrator runs on the model are their own classes, reached through the filter:
// Upkeep() (ledger retention and token expiry, model_upkeep.h), Users() (the users' layers:
// stats, list, deletion, user_layers.h) and Rollback() (what one source trained, listed and
// forgotten, source_rollback.h). What the front ends share is this class's classify,
// train and forget, and Status().
//
// User layers (model/layered.h, docs/API.md): every classify, train and forget may name
// a user. Classify(message, explain, id, user) scores with the user's own counts over the global
// model (ClassifyLayered with SpamFilterOptions::user_beta and user_gamma); a user with no layer
// scores exactly as the global model. A train or forget with a user changes that user's layer, and
// the global model too only when SpamFilterOptions::train_global_from_users is set.
#ifndef NBSPAMD_CORE_SPAM_FILTER_H_
#define NBSPAMD_CORE_SPAM_FILTER_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "core/activity.h"
#include "core/autolearn.h"
#include "core/model_knowledge.h"
#include "core/model_upkeep.h"
#include "core/readiness.h"
#include "core/service_status.h"
#include "core/source_rollback.h"
#include "core/spam_filter_options.h"
#include "core/store_watch.h"
#include "core/training_log.h"
#include "core/training_writer.h"
#include "core/user_layers.h"
#include "core/verdict_memory.h"
#include "history/fact_policy.h"
#include "history/scan_header.h"
#include "history/scan_history.h"
#include "history/scan_id.h"
#include "history/scan_signature.h"
#include "model/classifier.h"
#include "model/layered.h"
#include "model/learning.h"
#include "model/model_stats.h"
#include "storage/store.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::core {

struct ClassifyOutcome {
  // The message's id: the one the caller gave, else its content id (ContentId). A later train
  // of the message under this id reports whether this verdict was right (TrainOutcome::feedback).
  std::string id;
  model::ClassifyResult result;
  std::uint64_t tokens = 0;  // Token occurrences found in the message (known or not).
  // P(spam | score) calibrated on the model's held-out scores (model/calibration.h); nullopt
  // without a score or before enough feedback.
  std::optional<double> spam_confidence;
  // The scan's id in the scan history (history/scan_id.h); "" when nothing was recorded (no
  // history, or a classify that named no front end).
  std::string scan_id;
  // The scan's signature (history/scan_signature.h), for the scan header a front end writes: ""
  // with no scan_id.
  std::string scan_signature;
  // The thresholds the verdict was decided with (Thresholds() when it was made).
  model::VerdictThresholds thresholds;
};

struct TrainOutcome {
  std::string id;
  std::string label;
  model::LearnStatus status = model::LearnStatus::kUnchanged;
  std::uint64_t tokens = 0;
  // When the message was classified before under this id (and the verdict not yet used) and is
  // trained as spam or ham, once applied here: whether that verdict was right.
  std::optional<Feedback> feedback;
  // Cluster mode: the training stream entry of the change ("" in standalone use); `queued` when
  // the answer came once Redis had it, before this daemon applied it (status is then unknown).
  std::string stream_id;
  bool queued = false;
  // A message learned without an id that carries nbspamd's scan header: "matched" (the header's
  // signature holds for this body: learned as the scan), "other_message" (it does not: a forged
  // header, or one copied from another message; learned as itself), "unsigned" (a header with
  // no signature: written by a sender, or before headers were signed; learned as itself),
  // "unknown" (signed, but no such scan in this daemon's history: another daemon's or aged out;
  // learned as itself); "" without such a header.
  std::string scan_header;
};

struct ForgetOutcome {
  std::string id;
  std::string stream_id;  // As in TrainOutcome.
  bool queued = false;
};

using TrainDone = std::move_only_function<void(std::expected<TrainOutcome, Error>)>;
using ForgetDone = std::move_only_function<void(std::expected<ForgetOutcome, Error>)>;
// Starts a TrainingLog over the filter's store and writer: the log must be the only one to
// submit to `writer` from then on.
using TrainingLogStart = std::move_only_function<std::expected<std::unique_ptr<TrainingLog>, Error>(
    storage::Store& store, TrainingWriter& writer)>;

// Thread safety: every method may be called from any thread. Classify never waits for
// training: it reads the published counts and the published calibration (an immutable value the
// writer swaps in after each group it writes), taking no lock that training holds. Training
// requests are applied one at a time in the order the writer takes them; each is acknowledged only
// once it is durable.
// A train: what to learn, and for whom. Named fields because `source` and `user` are both
// strings: a positional call could swap them and still compile.
struct TrainRequest {
  std::string_view message = {};              // The raw message.
  std::string_view label = {};                // Its class: "spam", "ham" or another class name.
  std::optional<std::string_view> id = {};    // Learned under this id; none: its content id.
  std::string_view source = {};               // Who trained it (a bearer token's name); "": none.
  std::optional<std::string_view> user = {};  // Whose layer; none: the global model.
  // Counted whatever the training regime (TrainingRegime; a bulk import, docs/API.md "Training
  // regime"). In cluster mode the stream's event carries the mark to every daemon.
  bool count_all = false;
  // "spamd" for a TELL, "" otherwise: the scan history notes how a scan was learned by it.
  std::string_view front_end = {};
};

// A classify through a front end: the message and what the front end knows of its delivery.
struct ClassifyRequest {
  std::string_view message = {};
  std::size_t explain = 0;                    // Tokens to explain; 0: none.
  std::optional<std::string_view> id = {};    // The message's id; none: its content id.
  std::optional<std::string_view> user = {};  // Whose layer scores it; none: the global model.
  // "http", "milter" or "spamd": with a scan history, the scan is recorded as that front end's.
  // "": not recorded.
  std::string_view front_end = {};
  std::string_view client = {};      // The SMTP client's address, when the front end knows it.
  std::string_view recipients = {};  // The envelope recipients, comma-separated, likewise.
};

// A train or forget of what a scan of the history classified (ScanDetail::bag), under the
// scan's message key, without the message.
struct ScanTrainRequest {
  std::string_view scan_id = {};
  std::string_view label = {};   // For a train; ignored by a forget.
  std::string_view source = {};  // As TrainRequest::source.
  // Whose layer; none: the scan's own user (the global model for a scan without one).
  std::optional<std::string_view> user = {};
  bool count_all = false;  // For a train: as TrainRequest::count_all.
};

// What the scan history records besides the scans' own values (settings history_*). `facts`
// changes live (SetHistoryFacts).
struct HistoryOptions {
  history::FactPolicies facts = {};
  std::size_t explain = 20;   // Explaining tokens kept per scan.
  std::uint32_t id_salt = 0;  // Sets this process's scan ids apart (a random number).
};

// A forget: of the message learned under `id`, or, with no id, of `message` by its content id.
struct ForgetRequest {
  std::optional<std::string_view> id = {};
  std::string_view message = {};              // Read only when there is no id.
  std::string_view source = {};               // Who asked (SpamFilterOptions::TrainsGlobal).
  std::optional<std::string_view> user = {};  // Whose layer; none: the global model.
  std::string_view front_end = {};            // As TrainRequest::front_end.
};

class SpamFilter {
 public:
  // REQUIRES: options.alpha > 0.
  SpamFilter(std::unique_ptr<storage::Store> store, SpamFilterOptions options);

  // Classifies `message`, known as `id` (e.g. a Message-ID or the client's id; its content id
  // when none is given), and remembers a two-class verdict under that id for feedback from a
  // later train (VerdictMemory: bounded, the oldest forgotten first). `explain` > 0 asks for
  // that many tokens' weights.
  // With `user`, scores with that user's layer over the global model (a user with no layer:
  // exactly as without a user); spam_confidence is still the global calibration's.
  // With autolearn on and no user, a confident verdict also queues the learn of the message under
  // `id` (core/autolearn.h); classify does not wait for it.
  // Errors: kInvalidArgument for an empty message, a bad id (ValidateId) or a bad user
  // (model::CheckUserId), kFailedPrecondition before anything was learned; with a user,
  // kDataLoss or kInternal when its layer cannot be read.
  [[nodiscard]] std::expected<ClassifyOutcome, Error> Classify(
      std::string_view message, std::size_t explain,
      std::optional<std::string_view> id = std::nullopt,
      std::optional<std::string_view> user = std::nullopt) const {
    return Classify({.message = message, .explain = explain, .id = id, .user = user});
  }
  // The same for a front end: with a scan history and request.front_end set, the scan is also
  // recorded (queued: it never waits for the history's disk) and ClassifyOutcome::scan_id names
  // it; the explanation kept is HistoryOptions::explain tokens, whatever request.explain asks.
  [[nodiscard]] std::expected<ClassifyOutcome, Error> Classify(
      const ClassifyRequest& request) const;

  // Keeps a scan history from now on (history/scan_history.h): from the next classification, so
  // it may be called while serving (a history whose folder opened late). Call at most once.
  void EnableHistory(std::unique_ptr<history::ScanHistory> history, HistoryOptions options);
  // Signs scan headers with `key` (the cluster's: replication/cluster.h) in place of the key the
  // history keeps, so that a header one daemon wrote holds on every daemon; headers signed with
  // the history's key before still hold here. Any thread, at any time; only the first call counts.
  // Errors: kInvalidArgument when `key_hex` is not 64 hex digits.
  [[nodiscard]] std::expected<void, Error> UseScanKey(std::string_view key_hex);
  // The scan history; nullptr while it is off.
  [[nodiscard]] const history::ScanHistory* History() const {
    return history_.load(std::memory_order_acquire);
  }
  // How the history keeps each fact of the scans recorded from now on (a reload of the settings
  // history_keep_*), and the age after which clear facts are hashed (history_clear_facts_days, in
  // ms; 0: never). Any thread, while classifying: the next scan recorded takes them. Also before
  // EnableHistory, whose options' facts then take over.
  void SetHistoryFacts(history::FactPolicies facts, std::int64_t clear_facts_ms);
  // The policies in force (HistoryOptions::facts, then as SetHistoryFacts left them).
  [[nodiscard]] history::FactPolicies HistoryFacts() const {
    return *fact_policies_.load(std::memory_order_acquire);
  }

  // Learns the bag scan request.scan_id classified as request.label, under that scan's message
  // key, through the ledger as TrainAsync does (idempotent, a relearn moves the counts); `done`
  // runs as TrainAsync's. Errors: kFailedPrecondition without a scan history; the history's
  // (kInvalidArgument, kNotFound, kExpired: the scan aged out); then TrainAsync's.
  void TrainScanAsync(const ScanTrainRequest& request, TrainDone done);
  // Forgets the message scan request.scan_id classified (learned under its message key);
  // errors as TrainScanAsync's, then ForgetAsync's.
  void ForgetScanAsync(const ScanTrainRequest& request, ForgetDone done);

  // Learns request.message as request.label under request.id, or under the message's content
  // hash when no id is given (a message whose scan header names a scan of this daemon's history,
  // the copy of a classified message a user reports, is that scan: TrainScanAsync), recording
  // request.source (who trained it: a bearer token's name) and the time now as the ledger record's
  // origin; the outcome carries feedback on an earlier Classify of the same id. With request.user,
  // in that user's layer (and in the global model too when options().train_global_from_users takes
  // the source); TrainOutcome::status is then the user layer's. Tokenizes on the calling thread,
  // then queues the request for the writer; the request's strings are not used after the call
  // returns. `done` runs exactly once: on the calling thread before the call returns for a bad
  // request, else on the writer thread once the change is durable (see LearnCompletion for what a
  // completion may do). In cluster mode the change goes into the training stream, with the user and
  // this daemon's train_global_from_users, so every daemon applies it alike. Errors:
  // kInvalidArgument for an empty message, a bad label, id or user; kInternal or kDataLoss from
  // storage; kUnavailable after StopTraining.
  void TrainAsync(const TrainRequest& request, TrainDone done);

  // Forgets the message learned under request.id, or, with no id, request.message by its content
  // id; `done` runs as TrainAsync's. With request.user: from that user's layer (and, with
  // train_global_from_users taking request.source, from the global model when it holds the id).
  // Errors: kInvalidArgument for a bad id, an empty message or a bad user; kNotFound when nothing
  // was learned under the id (in the user's layer, with a user); kFailedPrecondition,
  // kUnavailable and storage's as TrainAsync.
  void ForgetAsync(const ForgetRequest& request, ForgetDone done);

  // TrainAsync and ForgetAsync waiting for the outcome, for tests and tools
  // that have a thread to block (never a front end's I/O thread).
  [[nodiscard]] std::expected<TrainOutcome, Error> Train(
      std::string_view message, std::string_view label, std::optional<std::string_view> id,
      std::optional<std::string_view> user = std::nullopt);
  [[nodiscard]] std::expected<std::string, Error> ForgetId(
      std::string_view id, std::optional<std::string_view> user = std::nullopt);
  [[nodiscard]] std::expected<std::string, Error> ForgetMessage(std::string_view message);

  // Replication (training_log.h; cluster mode: replication/cluster.h): from now on a train,
  // forget or rollback is submitted to the log that `start` returns and applied, here as on every
  // other daemon, when the log delivers it. Call once, before serving. Errors: those of `start`;
  // kFailedPrecondition with autolearn on (a learn through the log would make classify wait for
  // the log).
  [[nodiscard]] std::expected<void, Error> EnableReplication(TrainingLogStart start);
  // The replication state with a training log; nullopt in standalone use.
  [[nodiscard]] std::optional<ClusterStatus> Cluster() const {
    if (!replication_) return std::nullopt;
    return replication_->Status();
  }

  // Finishes the training requests queued so far; later ones fail with kUnavailable. The
  // daemon calls it once serving has stopped, before the store closes. Idempotent.
  void StopTraining() {
    if (replication_) replication_->Stop();
    writer_.Stop();
  }

  // Training groups written and training requests completed so far.
  [[nodiscard]] std::uint64_t TrainingGroups() const { return writer_.GroupCount(); }
  [[nodiscard]] std::uint64_t TrainingRequests() const { return writer_.RequestCount(); }
  // Training completions that threw (TrainingWriter::CompletionExceptions), for /metrics.
  [[nodiscard]] std::uint64_t TrainingCompletionExceptions() const {
    return writer_.CompletionExceptions();
  }

  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const { return store_->Stats(); }
  // Autolearn's counters; nullopt when it is off.
  [[nodiscard]] std::optional<AutolearnFigures> Autolearn() const {
    AutolearnFigures figures = autolearner_->Figures();
    if (!figures.enabled) return std::nullopt;
    return figures;
  }
  // Autolearn's options from now on (a reload of the settings). Errors: kInvalidArgument for
  // options out of range (AutolearnOptions); kFailedPrecondition when turning it on in cluster
  // mode (as EnableReplication).
  [[nodiscard]] std::expected<void, Error> SetAutolearn(AutolearnOptions options);
  // The last hour, minute by minute: classifications through every front end, and trainings.
  [[nodiscard]] const ActivityWindow& Activity() const { return activity_; }
  // Adds an earlier run's activity (core/activity_file.h). REQUIRES: before serving.
  void RestoreActivity(const std::vector<ActivitySlotCounts>& saved) { activity_.Restore(saved); }
  // When this filter was made (the daemon's start), in Unix milliseconds.
  [[nodiscard]] std::int64_t StartedMs() const { return started_ms_; }
  // The current calibration and the feedback histogram it was fitted from: the held-out scores
  // of the newest RecentFeedback::kHorizon ledger records (core/recent_feedback.h).
  [[nodiscard]] std::shared_ptr<const model::Calibration> Calibration() const {
    return recent_feedback_.Calibration();
  }

  // Whether the store takes writes, and its write-fault counters (Store::Health).
  [[nodiscard]] storage::WriteHealth StoreHealth() const { return store_->Health(); }
  // Everything above at one moment, as one plain value (service_status.h).
  [[nodiscard]] ServiceStatus Status() const;

  // Whether the daemon does all of its work now (readiness.h): the store takes writes and, with
  // replication, the log is read and caught up. A front end's health answer.
  [[nodiscard]] Readiness CheckReadiness() const { return ReadinessOf(StoreHealth(), Cluster()); }

  // The storage backend's own figures, for /metrics.
  [[nodiscard]] std::vector<storage::StorageProperty> StorageProperties() const {
    return store_->Properties();
  }

  // Writes a consistent copy of the model into the new folder `path` while serving goes on
  // (Store::Checkpoint): every training request acknowledged before the call is in it.
  [[nodiscard]] std::expected<void, Error> Backup(const std::string& path) {
    return store_->Checkpoint(path);
  }
  // Writes the whole model, the global layer and every user's, as a dump (dump/dump_format.h,
  // with this filter's alpha and tokenizer options) to `out`, as it is at one moment, while
  // serving goes on. Errors: Store::Export's; kInternal when `out` cannot be written.
  [[nodiscard]] std::expected<void, Error> Dump(std::FILE* out) const;
  [[nodiscard]] const SpamFilterOptions& options() const { return options_; }
  // The ledger retention and the token expiry of this filter's model (model_upkeep.h).
  [[nodiscard]] ModelUpkeep& Upkeep() { return upkeep_; }
  [[nodiscard]] const ModelUpkeep& Upkeep() const { return upkeep_; }
  // The users' layers as an administrator sees them: stats, list, deletion (user_layers.h).
  [[nodiscard]] UserLayers& Users() { return users_; }
  [[nodiscard]] const UserLayers& Users() const { return users_; }
  // What one source trained in a time window, listed and forgotten (source_rollback.h).
  [[nodiscard]] SourceRollback& Rollback() { return rollback_; }
  [[nodiscard]] const SourceRollback& Rollback() const { return rollback_; }
  // The verdict thresholds in force: the configured ones, narrowed by the recent feedback when
  // options().thresholds_from_feedback. Never waits.
  [[nodiscard]] model::VerdictThresholds Thresholds() const;
  // The configured thresholds (options().spam_threshold and ham_threshold at start, then as
  // SetThresholds left them). Never waits.
  [[nodiscard]] model::VerdictThresholds ConfiguredThresholds() const {
    return *configured_thresholds_.load(std::memory_order_acquire);
  }
  // New configured thresholds from now on (a reload of the settings): the next classification
  // decides with them. Errors: kInvalidArgument when thresholds.ham > thresholds.spam or either
  // is not finite; kFailedPrecondition when options().thresholds_from_feedback (they bound what
  // the recent feedback gives, which holds them from start: a restart changes them).
  [[nodiscard]] std::expected<void, Error> SetThresholds(model::VerdictThresholds thresholds);
  // What the recent feedback gives, whether or not it is in force (for /stats and the console).
  [[nodiscard]] std::shared_ptr<const model::FeedbackThresholds> FeedbackThresholds() const {
    return recent_feedback_.Current();
  }
  // The held-out scores FeedbackThresholds() rests on (RecentFeedback::HeldOut): what a threshold
  // pair would do to them (model/threshold_outcomes.h, GET /model/thresholds). Never waits.
  [[nodiscard]] std::shared_ptr<const model::HeldOutWindow> HeldOutFeedback() const {
    return recent_feedback_.HeldOut();
  }
  // What the model knows of a token, and the strongest tokens (model_knowledge.h).
  [[nodiscard]] const ModelKnowledge& Knowledge() const { return knowledge_; }

  // The id a message gets when the client gives none: 32 hex digits of XXH3-128 of its bytes.
  [[nodiscard]] static std::string ContentId(std::string_view message);
  // A label is 1 to 64 characters of A-Z a-z 0-9 _ . -
  [[nodiscard]] static std::expected<void, Error> ValidateLabel(std::string_view label);
  // An id is 1 to 256 bytes of UTF-8 with no control characters.
  [[nodiscard]] static std::expected<void, Error> ValidateId(std::string_view id);

 private:
  // Learns `scan`'s bag under its message key, in `user`'s layer (none: the scan's user's).
  // REQUIRES: label and user validated.
  void LearnScan(history::ScanRecord scan, std::string_view label, std::string_view source,
                 std::optional<std::string_view> user, TrainDone done, bool count_all = false,
                 std::string scan_header = "");
  // Queues the learn of `bag` for TrainAsync and TrainScanAsync, once validated. `count_all`:
  // as TrainRequest::count_all.
  void SubmitLearn(TrainOutcome outcome, TokenBag bag, std::string_view source,
                   std::optional<std::string_view> user, TrainDone done, bool count_all = false);
  // The scan of the history that `message`'s own scan header names (history/scan_header.h), in
  // `scan` only when this daemon has it and `message`'s body is that scan's
  // (history/body_digest.h); `outcome` as TrainOutcome::scan_header.
  struct ScanHeaderCheck {
    std::optional<history::ScanRecord> scan;
    std::string outcome;
  };
  [[nodiscard]] ScanHeaderCheck OwnScanOf(std::string_view message) const;
  // The key scan headers are signed with: the cluster's (UseScanKey), else `history`'s own.
  [[nodiscard]] const history::ScanKey& ScanKeyOf(const history::ScanHistory& history) const;
  // Records the scan of `request`, whose bag is `bag`, in the history; moves the explaining
  // tokens past request.explain out of `outcome`.
  void RecordScan(const ClassifyRequest& request, std::vector<BagEntry> bag,
                  const tokenizer::MessageFacts& facts, ClassifyOutcome& outcome) const;
  // What the scan history notes of a train or forget once durable (learned_state.h): of scan
  // `scan_id`, or, when "", of the scans of `user` under the trained message's id.
  struct LearnedMark {
    std::string scan_id;
    std::string user;
    std::string_view how;
    std::string by;
  };
  // The mark of a train or forget without a scan id: by its scan header's scan (`scan_id`, when
  // one matched), else by message key.
  [[nodiscard]] static LearnedMark MarkOf(std::string scan_id, bool by_id, std::string_view source,
                                          std::optional<std::string_view> user,
                                          std::string_view front_end);
  // `done`, noting `mark` in the scan history first when the train or forget succeeded.
  [[nodiscard]] TrainDone Noting(LearnedMark mark, TrainDone done) const;
  [[nodiscard]] ForgetDone Noting(LearnedMark mark, ForgetDone done) const;
  // `checked`: the ledger only checked the train (LearnStatus::kChecked), which the scan's learned
  // state then says. A train queued in cluster mode is noted as learned: its status is not known.
  void NoteLearned(const LearnedMark& mark, std::string_view message_key, std::string label,
                   bool checked = false) const;
  // ForgetAsync, noting `mark` (none: as the request says).
  void ForgetNoting(const ForgetRequest& request, ForgetDone done, std::optional<LearnedMark> mark);
  // Sets `outcome.feedback` from the verdict remembered for its id, which is then forgotten.
  // Runs where a train completes: quick, no I/O.
  void TakeFeedback(TrainOutcome& outcome) const;
  // `done`, recording the training's outcome and latency (from now) in activity_ first.
  template <typename Outcome>
  [[nodiscard]] std::move_only_function<void(std::expected<Outcome, Error>)> Timed(
      std::move_only_function<void(std::expected<Outcome, Error>)> done) {
    return [this, start = std::chrono::steady_clock::now(),
            done = std::move(done)](std::expected<Outcome, Error> outcome) mutable {
      activity_.RecordTrain(outcome                               ? TrainResult::kDone
                            : IsCallerError(outcome.error().code) ? TrainResult::kRejected
                                                                  : TrainResult::kFailed,
                            std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - start));
      done(std::move(outcome));
    };
  }
  // Submits a forget (of the global model or a user's layer) to the training stream.
  void SubmitForget(TrainingChange event, ForgetDone done);

  std::unique_ptr<storage::Store> store_;
  SpamFilterOptions options_;
  tokenizer::Tokenizer tokenizer_;
  // What Classify said, by message id, for the feedback of a later train. Before writer_: the
  // writer's last completions may still read it.
  mutable VerdictMemory verdicts_;
  // The last hour's classifications and trainings (GET /activity). Before writer_, as verdicts_.
  mutable ActivityWindow activity_;
  const std::int64_t started_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
  // The scan history, set at most once (EnableHistory), then never changed; history_ is published
  // (release) after history_options_ and scan_ids_ are set, so a thread that loads it (acquire)
  // non-null may read them. Before writer_: a completion of the writer may use it.
  std::unique_ptr<history::ScanHistory> history_owner_;
  std::atomic<history::ScanHistory*> history_{nullptr};
  HistoryOptions history_options_;
  std::unique_ptr<history::ScanIdGenerator> scan_ids_;
  // The fact policies in force: every version set stays (a reload is rare), so RecordScan never
  // waits and never sees one freed.
  std::atomic<const history::FactPolicies*> fact_policies_{nullptr};
  std::mutex fact_policies_mutex_;  // Guards fact_policy_versions_.
  std::vector<std::unique_ptr<const history::FactPolicies>> fact_policy_versions_;
  // The configured thresholds: every version set stays (a reload is rare), so a reader of the
  // pointer never waits and never sees one freed.
  std::atomic<const model::VerdictThresholds*> configured_thresholds_;
  std::mutex thresholds_mutex_;  // Guards threshold_versions_.
  std::vector<std::unique_ptr<const model::VerdictThresholds>> threshold_versions_;
  // The cluster's key of the scan header: set once (UseScanKey), then never changed or freed.
  std::atomic<const history::ScanKey*> cluster_scan_key_{nullptr};
  std::unique_ptr<const history::ScanKey> cluster_scan_key_owner_;
  // Guarded autolearn (never null; off, it considers nothing). Before writer_: the writer's last
  // completions count in it.
  std::unique_ptr<Autolearner> autolearner_;
  // The thresholds the recent feedback gives; the writer keeps it current. Before writer_.
  RecentFeedback recent_feedback_;
  TrainingWriter writer_;  // After store_: stops (draining its queue) before the store closes.
  std::unique_ptr<TrainingLog> replication_;  // After writer_: stops before it.
  ModelUpkeep upkeep_;       // After store_, writer_ and replication_, which it refers to.
  UserLayers users_;         // Likewise, and after history_.
  SourceRollback rollback_;  // Likewise, and after options_.
  // After store_, tokenizer_ and history_, which it refers to.
  ModelKnowledge knowledge_;
  std::unique_ptr<StoreWatch> watch_;  // Last: stops first.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_SPAM_FILTER_H_
