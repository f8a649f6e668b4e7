#include "core/spam_filter.h"

#include <xxhash.h>

#include <cassert>
#include <chrono>
#include <exception>
#include <future>
#include <iterator>
#include <mutex>

#include "common/hex.h"
#include "common/utf8.h"
#include "core/periodic_task.h"
#include "dump/dump_format.h"
#include "history/body_digest.h"
#include "model/user_layer.h"
#include "storage/expiry_bounds.h"

namespace nbspamd::core {
namespace {

constexpr std::size_t kMaxLabelBytes = 64;
constexpr std::size_t kMaxIdBytes = 256;

std::expected<void, Error> RequireMessage(std::string_view message) {
  if (message.empty()) return MakeError(ErrorCode::kInvalidArgument, "the message is empty");
  return {};
}

}  // namespace

std::int64_t SystemUnixMillis() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
}

std::int64_t SystemUnixSeconds() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::seconds>(now).count();
}

SpamFilter::SpamFilter(std::unique_ptr<storage::Store> store, SpamFilterOptions options)
    : store_(std::move(store)),
      options_(options),
      tokenizer_(options.tokenizer),
      recent_feedback_({.spam = options.spam_threshold, .ham = options.ham_threshold}),
      writer_(*store_, GroupLimits{},
              HeldOutScoring{.alpha = options.alpha,
                             .score_min_weight = options.score_min_weight,
                             .score_form = options.score_form},
              options.training_regime, &recent_feedback_) {
  assert(options_.alpha > 0);
  assert(options_.ham_threshold <= options_.spam_threshold);
  if (options_.autolearn.enabled) {
    autolearner_ = std::make_unique<Autolearner>(options_.autolearn, writer_, options_.clock);
  }
  if (options_.store_recovery_interval.count() > 0) {
    watch_ = std::make_unique<StoreWatch>(*store_, options_.store_recovery_interval);
  }
}

std::expected<ClassifyOutcome, Error> SpamFilter::Classify(const ClassifyRequest& request) const {
  const auto start = std::chrono::steady_clock::now();
  const auto [message, explain, id, user, front_end, client, recipients] = request;
  if (id) {
    if (auto valid = ValidateId(*id); !valid) return std::unexpected(std::move(valid.error()));
  }
  if (user) {
    if (auto valid = model::CheckUserId(*user); !valid) {
      return std::unexpected(std::move(valid.error()));
    }
  }
  if (auto ok = RequireMessage(message); !ok) return std::unexpected(ok.error());
  const bool record = History() != nullptr && !front_end.empty();
  const std::size_t explained = record ? std::max(explain, history_options_.explain) : explain;
  tokenizer::MessageFacts facts;
  TokenBag bag =
      tokenizer_.Tokenize(message, /*keep_text=*/explained > 0, record ? &facts : nullptr);
  const model::Snapshot snapshot = store_->Read(bag.entries);
  const model::VerdictThresholds thresholds = Thresholds();
  const model::ClassifyOptions classify_options{.alpha = options_.alpha,
                                                .spam_threshold = thresholds.spam,
                                                .ham_threshold = thresholds.ham,
                                                .score_min_weight = options_.score_min_weight,
                                                .score_form = options_.score_form,
                                                .explain = explained};
  std::optional<model::Snapshot> layer;
  if (user) {
    auto read = store_->ReadUser(*user, *snapshot.stats, bag.entries);
    if (!read) return std::unexpected(std::move(read.error()));
    layer = std::move(*read);
  }
  // A user with no layer scores as the global model: plain Classify, to the bit.
  auto result =
      layer ? model::ClassifyLayered(bag, snapshot, *layer, classify_options,
                                     {.beta = options_.user_beta, .gamma = options_.user_gamma})
            : model::Classify(bag, snapshot, classify_options);
  if (!result) return std::unexpected(result.error());
  std::optional<double> spam_confidence;
  if (result->score) spam_confidence = store_->Calibration()->SpamConfidence(*result->score);
  ClassifyOutcome outcome{id ? std::string(*id) : ContentId(message),
                          std::move(*result),
                          bag.TotalCount(),
                          spam_confidence,
                          "",
                          "",
                          thresholds};
  if (outcome.result.SpamProbability()) {
    verdicts_.Remember(outcome.id, outcome.result.verdict == model::Verdict::kSpam);
  }
  if (autolearner_ && !user) {
    autolearner_->Consider({.id = outcome.id,
                            .spam_confidence = outcome.spam_confidence,
                            .verdict = outcome.result.verdict},
                           *snapshot.stats, bag.entries);
  }
  if (record) RecordScan(request, std::move(bag.entries), facts, outcome);  // bag's last use.
  if (outcome.result.explanations.size() > explain) outcome.result.explanations.resize(explain);
  activity_.RecordClassify(
      outcome.result.score ? std::optional(outcome.result.verdict) : std::nullopt,
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                            start));
  return outcome;
}

model::VerdictThresholds SpamFilter::Thresholds() const {
  if (options_.thresholds_from_feedback) return recent_feedback_.Current()->thresholds;
  return {.spam = options_.spam_threshold, .ham = options_.ham_threshold};
}

void SpamFilter::EnableHistory(std::unique_ptr<history::ScanHistory> history,
                               HistoryOptions options) {
  history_options_ = options;
  scan_ids_ = std::make_unique<history::ScanIdGenerator>(options.id_salt);
  history_owner_ = std::move(history);
  history_.store(history_owner_.get(), std::memory_order_release);
}

void SpamFilter::RecordScan(const ClassifyRequest& request, std::vector<BagEntry> bag,
                            const tokenizer::MessageFacts& facts, ClassifyOutcome& outcome) const {
  const std::int64_t now = SystemUnixMillis();
  history::ScanRecord record;
  history::ScanSummary& summary = record.summary;
  summary.scan_id = scan_ids_->Next(now);
  summary.time_ms = now;
  summary.front_end = std::string(request.front_end);
  summary.user = request.user ? std::string(*request.user) : std::string();
  summary.message_key = outcome.id;
  summary.label = outcome.result.label();
  summary.verdict = std::string(model::VerdictName(outcome.result.verdict));
  summary.score = outcome.result.score;
  summary.spam_confidence = outcome.spam_confidence;
  summary.size = request.message.size();
  summary.tokens = outcome.tokens;
  history::ScanHistory* history = history_.load(std::memory_order_acquire);
  summary.facts = history::KeptFacts({.message_id = facts.message_id,
                                      .from_domain = facts.from_domain,
                                      .subject = facts.subject,
                                      .client = std::string(request.client),
                                      .recipients = std::string(request.recipients)},
                                     history_options_.facts, history->fact_key());
  const std::size_t top = std::min(outcome.result.explanations.size(), history_options_.explain);
  record.detail.top.reserve(top);
  for (std::size_t i = 0; i < top; ++i) {
    const model::TokenExplanation& token = outcome.result.explanations[i];
    // A fact kept as a hash or not at all does not show through its tokens either.
    record.detail.top.push_back(
        {history::KeptTokenText(token.token, token.source, history_options_.facts,
                                history->fact_key()),
         token.source, token.count, token.weight});
  }
  record.detail.bag = std::move(bag);
  record.detail.body_digest = history::BodyDigest(request.message);
  outcome.scan_id = summary.scan_id;
  outcome.scan_signature =
      history::SignScan(ScanKeyOf(*history), outcome.scan_id, record.detail.body_digest);
  history->Record(std::move(record));
}

ServiceStatus SpamFilter::Status() const {
  ServiceStatus status;
  status.model = Stats();
  status.calibration = Calibration();
  status.thresholds = Thresholds();
  status.storage = StorageProperties();
  status.store_health = StoreHealth();
  status.training_completion_exceptions = TrainingCompletionExceptions();
  status.background_task_exceptions = BackgroundTaskExceptions().load(std::memory_order_relaxed);
  status.replication = Cluster();
  if (const history::ScanHistory* history = History()) status.history = history->Figures();
  status.autolearn = Autolearn();
  status.expiry = Expiry();
  status.readiness = ReadinessOf(status.store_health, status.replication);
  return status;
}

void SpamFilter::TakeFeedback(TrainOutcome& outcome) const {
  if (outcome.label != "spam" && outcome.label != "ham") return;
  const std::optional<bool> was_spam = verdicts_.Take(outcome.id);
  if (!was_spam) return;
  const bool is_spam = outcome.label == "spam";
  outcome.feedback = *was_spam == is_spam ? Feedback::kAgreed
                     : *was_spam          ? Feedback::kFalsePositive
                                          : Feedback::kFalseNegative;
}

void SpamFilter::TrainAsync(const TrainRequest& train, TrainDone caller_done) {
  TrainDone done = Timed(std::move(caller_done));
  const auto [message, label, id, source, user, count_all] = train;
  std::expected<void, Error> valid = RequireMessage(message);
  if (valid) valid = ValidateLabel(label);
  if (valid && id) valid = ValidateId(*id);
  if (valid && user) valid = model::CheckUserId(*user);
  if (!valid) return done(std::unexpected(std::move(valid.error())));

  // The copy of a classified message that a user reports carries nbspamd's scan header: when its
  // body is the scanned message's, it is that message, learned as that scan's bag under that
  // scan's key. A header on another body (forged, or copied onto other mail) is ignored.
  std::string scan_header;
  if (!id) {
    ScanHeaderCheck check = OwnScanOf(message);
    if (check.scan) {
      return LearnScan(std::move(*check.scan), label, source, user, std::move(done), count_all,
                       std::move(check.outcome));
    }
    scan_header = std::move(check.outcome);
  }
  TrainOutcome outcome;
  outcome.scan_header = std::move(scan_header);
  outcome.id = id ? std::string(*id) : ContentId(message);
  outcome.label = std::string(label);
  TokenBag bag;
  try {
    bag = tokenizer_.Tokenize(message);
  } catch (const std::exception& e) {
    return done(MakeError(ErrorCode::kInternal, std::string("tokenizing failed: ") + e.what()));
  }
  SubmitLearn(std::move(outcome), std::move(bag), source, user, std::move(done), count_all);
}

void SpamFilter::SubmitLearn(TrainOutcome outcome, TokenBag bag, std::string_view source,
                             std::optional<std::string_view> user, TrainDone done, bool count_all) {
  outcome.tokens = bag.TotalCount();
  model::LearnOrigin origin{std::string(source), options_.clock()};
  if (replication_ && count_all) {
    return done(MakeError(ErrorCode::kInvalidArgument,
                          "count=all is not available in cluster mode: every daemon decides "
                          "what it counts from the training stream, which carries no such mark"));
  }
  if (replication_) {
    TrainingChange event;
    event.kind = TrainingChange::Kind::kLearn;
    event.id = outcome.id;
    event.label = outcome.label;
    event.tokens = std::move(bag.entries);
    event.origin = std::move(origin);
    if (user) {
      event.user = std::string(*user);
      event.train_global = options_.TrainsGlobal(source);
    }
    return replication_->Submit(std::move(event),
                                [this, outcome = std::move(outcome), done = std::move(done)](
                                    std::expected<Replicated, Error> replicated) mutable {
                                  if (!replicated)
                                    return done(std::unexpected(std::move(replicated.error())));
                                  outcome.stream_id = std::move(replicated->stream_id);
                                  outcome.queued = !replicated->status;
                                  if (replicated->status) {
                                    outcome.status = *replicated->status;
                                    TakeFeedback(outcome);  // Applied here: its outcome is known.
                                  }
                                  done(std::move(outcome));
                                });
  }
  LearnRequest request{outcome.id, outcome.label, std::move(bag), std::move(origin), count_all};
  auto learned_done = [this, outcome = std::move(outcome), done = std::move(done)](
                          std::expected<model::LearnStatus, Error> learned) mutable {
    if (!learned) return done(std::unexpected(std::move(learned.error())));
    outcome.status = *learned;
    TakeFeedback(outcome);
    done(std::move(outcome));
  };
  if (user) {
    return writer_.LearnForUser(std::move(request),
                                {std::string(*user), options_.TrainsGlobal(source)},
                                std::move(learned_done));
  }
  writer_.Learn(std::move(request), std::move(learned_done));
}

void SpamFilter::ForgetAsync(const ForgetRequest& request, ForgetDone caller_done) {
  ForgetDone done = Timed(std::move(caller_done));
  std::string content_id;
  if (!request.id) {
    if (auto ok = RequireMessage(request.message); !ok) {
      return done(std::unexpected(std::move(ok.error())));
    }
    if (ScanHeaderCheck check = OwnScanOf(request.message); check.scan) {
      content_id = std::move(check.scan->summary.message_key);  // As TrainAsync learned it.
    } else {
      content_id = ContentId(request.message);
    }
  }
  const std::string_view id = request.id ? *request.id : std::string_view(content_id);
  const std::optional<std::string_view> user = request.user;
  const std::string_view source = request.source;
  if (auto ok = ValidateId(id); !ok) return done(std::unexpected(std::move(ok.error())));
  if (user) {
    if (auto ok = model::CheckUserId(*user); !ok) {
      return done(std::unexpected(std::move(ok.error())));
    }
    if (replication_) {
      TrainingChange event;
      event.kind = TrainingChange::Kind::kForget;
      event.id = std::string(id);
      event.user = std::string(*user);
      event.train_global = options_.TrainsGlobal(source);
      return SubmitForget(std::move(event), std::move(done));
    }
    return writer_.ForgetForUser(
        std::string(id), {std::string(*user), options_.TrainsGlobal(source)},
        [id = std::string(id),
         done = std::move(done)](std::expected<void, Error> forgotten) mutable {
          if (!forgotten) return done(std::unexpected(std::move(forgotten.error())));
          done(ForgetOutcome{std::move(id), "", false});
        });
  }
  if (replication_) {
    TrainingChange event;
    event.kind = TrainingChange::Kind::kForget;
    event.id = std::string(id);
    return SubmitForget(std::move(event), std::move(done));
  }
  writer_.Forget(std::string(id), [id = std::string(id), done = std::move(done)](
                                      std::expected<void, Error> forgotten) mutable {
    if (!forgotten) return done(std::unexpected(std::move(forgotten.error())));
    done(ForgetOutcome{std::move(id), "", false});
  });
}

SpamFilter::ScanHeaderCheck SpamFilter::OwnScanOf(std::string_view message) const {
  const history::ScanHistory* history = History();
  if (history == nullptr) return {};
  const std::optional<history::ScanHeader> header = history::FindScanHeader(message);
  if (!header) return {};
  // Written before headers were signed, or by a sender: the message's own bytes.
  if (header->signature.empty()) return {.scan = std::nullopt, .outcome = "unsigned"};
  const std::string digest = history::BodyDigest(message);
  // Forged, or a real header on another message: the message's own bytes. A header signed with
  // the history's own key before the cluster's was known holds too.
  const history::ScanKey* cluster_key = cluster_scan_key_.load(std::memory_order_acquire);
  const bool holds =
      (cluster_key != nullptr &&
       history::ScanSignatureHolds(*cluster_key, header->id, digest, header->signature)) ||
      history::ScanSignatureHolds(history->scan_key(), header->id, digest, header->signature);
  if (!holds) {
    return {.scan = std::nullopt, .outcome = "other_message"};
  }
  auto scan = history->Find(header->id);
  // Another daemon's of the cluster, or aged out: the message's own bytes.
  if (!scan) return {.scan = std::nullopt, .outcome = "unknown"};
  // Only with the key of another history, which signed a scan of the same id: its own bytes.
  if (scan->detail.body_digest != digest) return {.scan = std::nullopt, .outcome = "other_message"};
  return {.scan = std::move(*scan), .outcome = "matched"};
}

const history::ScanKey& SpamFilter::ScanKeyOf(const history::ScanHistory& history) const {
  const history::ScanKey* cluster_key = cluster_scan_key_.load(std::memory_order_acquire);
  return cluster_key != nullptr ? *cluster_key : history.scan_key();
}

std::expected<void, Error> SpamFilter::UseScanKey(std::string_view key_hex) {
  auto key = history::ParseScanKeyHex(key_hex);
  if (!key) return std::unexpected(std::move(key.error()));
  auto owned = std::make_unique<const history::ScanKey>(*key);
  const history::ScanKey* none = nullptr;
  if (cluster_scan_key_.compare_exchange_strong(none, owned.get(), std::memory_order_acq_rel)) {
    cluster_scan_key_owner_ = std::move(owned);  // Read only through cluster_scan_key_.
  }
  return {};
}

void SpamFilter::TrainScanAsync(const ScanTrainRequest& request, TrainDone caller_done) {
  TrainDone done = Timed(std::move(caller_done));
  const history::ScanHistory* history = History();
  if (history == nullptr) {
    return done(MakeError(ErrorCode::kFailedPrecondition, "the scan history is off"));
  }
  std::expected<void, Error> valid = ValidateLabel(request.label);
  if (valid && request.user) valid = model::CheckUserId(*request.user);
  if (!valid) return done(std::unexpected(std::move(valid.error())));
  auto scan = history->Find(request.scan_id);
  if (!scan) return done(std::unexpected(std::move(scan.error())));
  LearnScan(std::move(*scan), request.label, request.source, request.user, std::move(done),
            request.count_all);
}

void SpamFilter::LearnScan(history::ScanRecord scan, std::string_view label,
                           std::string_view source, std::optional<std::string_view> user,
                           TrainDone done, bool count_all, std::string scan_header) {
  const std::string scan_user = std::move(scan.summary.user);
  if (!user && !scan_user.empty()) user = scan_user;
  TrainOutcome outcome;
  outcome.scan_header = std::move(scan_header);
  outcome.id = std::move(scan.summary.message_key);
  outcome.label = std::string(label);
  SubmitLearn(std::move(outcome), TokenBag{std::move(scan.detail.bag), {}}, source, user,
              std::move(done), count_all);
}

void SpamFilter::ForgetScanAsync(const ScanTrainRequest& request, ForgetDone done) {
  const history::ScanHistory* history = History();
  if (history == nullptr) {
    return done(MakeError(ErrorCode::kFailedPrecondition, "the scan history is off"));
  }
  auto scan = history->Find(request.scan_id);
  if (!scan) return done(std::unexpected(std::move(scan.error())));
  const std::string& scan_user = scan->summary.user;
  std::optional<std::string_view> user = request.user;
  if (!user && !scan_user.empty()) user = scan_user;
  ForgetAsync({.id = scan->summary.message_key, .source = request.source, .user = user},
              std::move(done));
}

void SpamFilter::SubmitForget(TrainingChange event, ForgetDone done) {
  std::string id = event.id;
  replication_->Submit(std::move(event), [id = std::move(id), done = std::move(done)](
                                             std::expected<Replicated, Error> replicated) mutable {
    if (!replicated) return done(std::unexpected(std::move(replicated.error())));
    done(ForgetOutcome{std::move(id), std::move(replicated->stream_id), !replicated->status});
  });
}

std::expected<void, Error> SpamFilter::EnableReplication(TrainingLogStart start) {
  if (autolearner_) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "autolearn is not available in cluster mode: set autolearn = false");
  }
  auto log = start(*store_, writer_);
  if (!log) return std::unexpected(std::move(log.error()));
  replication_ = std::move(*log);
  return {};
}

void SpamFilter::DeleteUserAsync(std::string_view user, DeleteUserDone done) {
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
  if (replication_) {
    TrainingChange event;
    event.kind = TrainingChange::Kind::kDeleteUser;
    event.user = std::string(user);
    return replication_->Submit(
        std::move(event),
        [done = std::move(done)](std::expected<Replicated, Error> replicated) mutable {
          if (!replicated) return done(std::unexpected(std::move(replicated.error())));
          done({});
        });
  }
  writer_.DeleteUser(std::string(user), std::move(done));
}

std::expected<std::optional<model::ModelStats>, Error> SpamFilter::UserStats(
    std::string_view user) const {
  if (auto ok = model::CheckUserId(user); !ok) return std::unexpected(std::move(ok.error()));
  return store_->UserStats(user);
}

std::expected<std::vector<storage::LearnedMessage>, Error> SpamFilter::ListLearned(
    std::string_view source, std::int64_t since, std::int64_t until, std::size_t limit,
    std::optional<std::string_view> user) const {
  if (!user) return store_->ListLearned(source, since, until, limit);
  if (auto ok = model::CheckUserId(*user); !ok) return std::unexpected(std::move(ok.error()));
  return store_->ListUserLearned(*user, source, since, until, limit);
}

void SpamFilter::RollbackAsync(std::string_view source, std::int64_t since, std::int64_t until,
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
    if (replication_) {
      TrainingChange event;
      event.kind = TrainingChange::Kind::kForget;
      event.id = std::move(message.id);
      event.only_source = std::string(source);
      if (user) {
        event.user = std::string(*user);
        event.train_global = options_.TrainsGlobal(source);
      }
      replication_->Submit(std::move(event),
                           [forgotten_one = std::move(forgotten_one)](
                               std::expected<Replicated, Error> replicated) mutable {
                             if (!replicated)
                               return forgotten_one(std::unexpected(std::move(replicated.error())));
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

std::expected<TrainOutcome, Error> SpamFilter::Train(std::string_view message,
                                                     std::string_view label,
                                                     std::optional<std::string_view> id,
                                                     std::optional<std::string_view> user) {
  std::promise<std::expected<TrainOutcome, Error>> outcome;
  auto future = outcome.get_future();
  TrainAsync({.message = message, .label = label, .id = id, .user = user},
             [&outcome](std::expected<TrainOutcome, Error> result) {
               outcome.set_value(std::move(result));
             });
  return future.get();
}

namespace {

// Steps of the ledger retention, one after another from the writer's thread, until none is
// left: each step's completion queues the next (it does not wait for it).
// The global ledger first, then the users' ledgers.
struct RetireSteps {
  TrainingWriter& writer;
  std::int64_t learned_before;
  std::uint64_t retired = 0;
  RetireLedgerDone done;
  RetireScope scope = RetireScope::kGlobal;

  static void Next(std::unique_ptr<RetireSteps> steps, std::string from) {
    TrainingWriter& writer = steps->writer;
    const std::int64_t before = steps->learned_before;
    const RetireScope scope = steps->scope;
    writer.RetireLedger(
        before, kRetireStepRecords,
        [steps = std::move(steps)](std::expected<storage::RetireStep, Error> step) mutable {
          if (!step) return steps->done(std::unexpected(std::move(step.error())));
          steps->retired += step->retired;
          if (step->more) return Next(std::move(steps), std::move(step->next));
          if (steps->scope == RetireScope::kUsers) return steps->done(steps->retired);
          steps->scope = RetireScope::kUsers;
          Next(std::move(steps), "");
        },
        "", std::move(from), scope);
  }
};

// Steps of the token expiry, chained as RetireSteps.
struct ExpirySteps {
  TrainingWriter& writer;
  storage::TokenExpiryRule rule;
  std::uint64_t dropped = 0;
  ExpireTokensDone done;

  static void Next(std::unique_ptr<ExpirySteps> steps, TokenHash from) {
    TrainingWriter& writer = steps->writer;
    const storage::TokenExpiryRule rule = steps->rule;
    writer.ExpireTokens(
        rule, from, kExpiryStepTokens, std::nullopt,
        [steps = std::move(steps)](std::expected<storage::TokenExpiryStep, Error> step) mutable {
          if (!step) return steps->done(std::unexpected(std::move(step.error())));
          steps->dropped += step->dropped;
          if (!step->next) return steps->done(steps->dropped);
          Next(std::move(steps), *step->next);
        });
  }
};

// Steps of the token expiry of the user layers, chained as RetireSteps.
struct UserExpirySteps {
  TrainingWriter& writer;
  storage::TokenExpiryRule rule;
  std::uint64_t dropped = 0;
  ExpireTokensDone done;

  static void Next(std::unique_ptr<UserExpirySteps> steps, std::string from) {
    TrainingWriter& writer = steps->writer;
    const storage::TokenExpiryRule rule = steps->rule;
    writer.ExpireUserTokens(rule, std::move(from), kExpiryStepTokens, std::nullopt,
                            [steps = std::move(steps)](
                                std::expected<storage::UserTokenExpiryStep, Error> step) mutable {
                              if (!step)
                                return steps->done(std::unexpected(std::move(step.error())));
                              steps->dropped += step->dropped;
                              if (!step->next) return steps->done(steps->dropped);
                              Next(std::move(steps), std::move(*step->next));
                            });
  }
};

// Cluster mode: answers `done` once every one of `count` submitted changes is in the log, with
// the first error if any.
struct Submitted {
  std::mutex mutex;
  std::size_t left;
  std::optional<Error> error;
  std::move_only_function<void(std::expected<std::uint64_t, Error>)> done;

  void One(std::expected<Replicated, Error> replicated) {
    std::unique_lock lock(mutex);
    if (!replicated && !error) error = std::move(replicated.error());
    if (--left > 0) return;
    lock.unlock();
    if (error) return done(std::unexpected(std::move(*error)));
    done(std::uint64_t{0});
  }
};

}  // namespace

void SpamFilter::ExpireTokensAsync(const storage::TokenExpiryRule& rule, ExpireTokensDone done) {
  if (!replication_) {
    return ExpirySteps::Next(
        std::unique_ptr<ExpirySteps>(new ExpirySteps{writer_, rule, 0, std::move(done)}), 0);
  }
  // Through the stream, in steps every daemon takes alike: the hash space in equal ranges, about
  // kExpiryStepTokens tokens each (token hashes are uniform).
  const std::vector<TokenHash> bounds =
      storage::TokenExpiryBounds(Stats()->vocabulary_size, kExpiryStepTokens);
  auto submitted = std::make_shared<Submitted>();
  submitted->left = bounds.size() + 1;
  submitted->done = std::move(done);
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    TrainingChange change;
    change.kind = TrainingChange::Kind::kExpire;
    change.expiry_rule = rule;
    change.expiry_from = i > 0 ? bounds[i - 1] : 0;
    if (i < bounds.size()) change.expiry_until = bounds[i];
    replication_->Submit(std::move(change), [submitted](std::expected<Replicated, Error> r) {
      submitted->One(std::move(r));
    });
  }
}

void SpamFilter::ExpireUserTokensAsync(const storage::TokenExpiryRule& rule,
                                       ExpireTokensDone done) {
  if (!replication_) {
    return UserExpirySteps::Next(
        std::unique_ptr<UserExpirySteps>(new UserExpirySteps{writer_, rule, 0, std::move(done)}),
        "");
  }
  // Through the stream, in steps every daemon takes alike: ranges of users' keys of about
  // kExpiryStepTokens tokens each, cut from the layers' sizes.
  auto users = store_->ListAllUsers();
  if (!users) return done(std::unexpected(std::move(users.error())));
  const std::vector<std::string> bounds = storage::UserExpiryBounds(*users, kExpiryStepTokens);
  auto submitted = std::make_shared<Submitted>();
  submitted->left = bounds.size() + 1;
  submitted->done = std::move(done);
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    TrainingChange change;
    change.kind = TrainingChange::Kind::kExpireUsers;
    change.expiry_rule = rule;
    if (i > 0) change.user_expiry_from = bounds[i - 1];
    if (i < bounds.size()) change.user_expiry_until = bounds[i];
    replication_->Submit(std::move(change), [submitted](std::expected<Replicated, Error> r) {
      submitted->One(std::move(r));
    });
  }
}

std::expected<std::uint64_t, Error> SpamFilter::ExpireUserTokens(
    const storage::TokenExpiryRule& rule) {
  std::promise<std::expected<std::uint64_t, Error>> outcome;
  auto future = outcome.get_future();
  ExpireUserTokensAsync(rule, [&outcome](std::expected<std::uint64_t, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

std::expected<std::uint64_t, Error> SpamFilter::ExpireTokens(const storage::TokenExpiryRule& rule) {
  std::promise<std::expected<std::uint64_t, Error>> outcome;
  auto future = outcome.get_future();
  ExpireTokensAsync(rule, [&outcome](std::expected<std::uint64_t, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

ExpiryFigures SpamFilter::Expiry() const {
  ExpiryFigures figures;
  {
    std::lock_guard lock(expiry_mutex_);
    figures = expiry_passes_;
  }
  figures.retired_records = writer_.RetiredRecords();
  figures.dropped_tokens = writer_.DroppedTokens();
  figures.retired_user_records = writer_.RetiredUserRecords();
  figures.dropped_user_tokens = writer_.DroppedUserTokens();
  return figures;
}

void SpamFilter::NoteExpiryPass(std::int64_t ended_at, double seconds, bool cap_met,
                                bool age_rule_waiting) {
  std::lock_guard lock(expiry_mutex_);
  ++expiry_passes_.passes;
  expiry_passes_.last_pass_end = ended_at;
  expiry_passes_.last_pass_seconds = seconds;
  expiry_passes_.cap_met = cap_met;
  expiry_passes_.age_rule_waiting = age_rule_waiting;
}

void SpamFilter::RetireLedgerAsync(std::int64_t learned_before, RetireLedgerDone done) {
  if (!replication_) {
    return RetireSteps::Next(
        std::unique_ptr<RetireSteps>(new RetireSteps{writer_, learned_before, 0, std::move(done)}),
        "");
  }
  // Through the stream, in steps of kRetireStepRecords records that every daemon takes alike at
  // the same places in the log: the global ledger's, then the users'. Each step starts where this
  // daemon's ledger says the one before ends; applied elsewhere to the same state, it retires the
  // same records (a record forgotten meanwhile only makes a step reach further).
  std::vector<TrainingChange> steps;
  for (const bool users : {false, true}) {
    auto starts = store_->RetireStepStarts(learned_before, kRetireStepRecords, users,
                                           kClusterRetireStepsPerPass - 1);
    if (!starts) return done(std::unexpected(std::move(starts.error())));
    starts->insert(starts->begin(), "");
    for (std::string& from : *starts) {
      TrainingChange change;
      change.kind = TrainingChange::Kind::kRetireStep;
      change.learned_before = learned_before;
      change.retire_users = users;
      change.retire_from = std::move(from);
      change.retire_max_records = kRetireStepRecords;
      steps.push_back(std::move(change));
    }
  }
  auto submitted = std::make_shared<Submitted>();
  submitted->left = steps.size();
  submitted->done = std::move(done);
  for (TrainingChange& change : steps) {
    replication_->Submit(std::move(change), [submitted](std::expected<Replicated, Error> r) {
      submitted->One(std::move(r));
    });
  }
}

std::expected<std::uint64_t, Error> SpamFilter::RetireLedger(std::int64_t learned_before) {
  std::promise<std::expected<std::uint64_t, Error>> outcome;
  auto future = outcome.get_future();
  RetireLedgerAsync(learned_before, [&outcome](std::expected<std::uint64_t, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

std::expected<void, Error> SpamFilter::DeleteUser(std::string_view user) {
  std::promise<std::expected<void, Error>> outcome;
  auto future = outcome.get_future();
  DeleteUserAsync(user, [&outcome](std::expected<void, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

std::expected<std::string, Error> SpamFilter::ForgetId(std::string_view id,
                                                       std::optional<std::string_view> user) {
  std::promise<std::expected<std::string, Error>> outcome;
  auto future = outcome.get_future();
  ForgetAsync({.id = id, .user = user}, [&outcome](std::expected<ForgetOutcome, Error> result) {
    if (!result) return outcome.set_value(std::unexpected(std::move(result.error())));
    outcome.set_value(std::move(result->id));
  });
  return future.get();
}

std::expected<std::string, Error> SpamFilter::ForgetMessage(std::string_view message) {
  std::promise<std::expected<std::string, Error>> outcome;
  auto future = outcome.get_future();
  ForgetAsync({.message = message}, [&outcome](std::expected<ForgetOutcome, Error> result) {
    if (!result) return outcome.set_value(std::unexpected(std::move(result.error())));
    outcome.set_value(std::move(result->id));
  });
  return future.get();
}

std::string SpamFilter::ContentId(std::string_view message) {
  const XXH128_hash_t hash = XXH3_128bits(message.data(), message.size());
  std::string text;
  text.reserve(32);
  AppendHex(text, hash.high64, 16);
  AppendHex(text, hash.low64, 16);
  return text;
}

std::expected<void, Error> SpamFilter::ValidateLabel(std::string_view label) {
  if (label.empty()) return MakeError(ErrorCode::kInvalidArgument, "the label is empty");
  if (label.size() > kMaxLabelBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "the label is longer than 64 characters");
  }
  for (char c : label) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!allowed) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the label may hold only letters, digits, '_', '.' and '-'");
    }
  }
  return {};
}

std::expected<void, Error> SpamFilter::ValidateId(std::string_view id) {
  if (id.empty()) return MakeError(ErrorCode::kInvalidArgument, "the id is empty");
  if (id.size() > kMaxIdBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "the id is longer than 256 bytes");
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) {
      return MakeError(ErrorCode::kInvalidArgument, "the id holds a control character");
    }
  }
  if (!IsValidUtf8(id)) {
    return MakeError(ErrorCode::kInvalidArgument, "the id is not valid UTF-8");
  }
  return {};
}

std::expected<void, Error> SpamFilter::Dump(std::FILE* out) const {
  dump::DumpWriter writer(out, {options_.alpha, dump::TokenizerFingerprint(options_.tokenizer)});
  if (auto exported = store_->Export(writer); !exported) return exported;
  return writer.Finish();
}

}  // namespace nbspamd::core
