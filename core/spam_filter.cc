#include "core/spam_filter.h"

#include <xxhash.h>

#include <cassert>
#include <chrono>
#include <cmath>
#include <exception>
#include <future>
#include <iterator>
#include <mutex>

#include "common/hex.h"
#include "common/utf8.h"
#include "core/periodic_task.h"
#include "dump/dump_format.h"
#include "history/body_digest.h"
#include "history/learned_state.h"
#include "model/user_layer.h"

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
                             .score_form = options.score_form,
                             .char_ngram_share = options.char_ngram_share},
              options.training_regime, &recent_feedback_),
      upkeep_(*store_, writer_, replication_),
      users_(*store_, writer_, replication_, history_),
      rollback_(*store_, writer_, replication_, options_),
      knowledge_(*store_, tokenizer_, options_.alpha, history_) {
  threshold_versions_.push_back(std::make_unique<const model::VerdictThresholds>(
      model::VerdictThresholds{.spam = options_.spam_threshold, .ham = options_.ham_threshold}));
  configured_thresholds_.store(threshold_versions_.back().get(), std::memory_order_release);
  assert(options_.alpha > 0);
  assert(options_.ham_threshold <= options_.spam_threshold);
  autolearner_ = std::make_unique<Autolearner>(options_.autolearn, writer_, options_.clock);
  autolearner_->SetLearnedHook([this](std::string_view scan_id, std::string_view label) {
    NoteLearned({.scan_id = std::string(scan_id),
                 .user = "",
                 .how = history::kLearnedByAutolearn,
                 .by = std::string(model::kAutolearnSource)},
                "", std::string(label));
  });
  SetHistoryFacts({}, 0);
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
                                                .char_ngram_share = options_.char_ngram_share,
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
  if (result->score) spam_confidence = Calibration()->SpamConfidence(*result->score);
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
  // The scan's id before autolearn, which notes it in the history once learned.
  if (record) outcome.scan_id = scan_ids_->Next(SystemUnixMillis());
  if (!user) {
    autolearner_->Consider({.id = outcome.id,
                            .spam_confidence = outcome.spam_confidence,
                            .verdict = outcome.result.verdict,
                            .scan_id = outcome.scan_id},
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
  return ConfiguredThresholds();
}

std::expected<void, Error> SpamFilter::SetThresholds(model::VerdictThresholds thresholds) {
  if (!std::isfinite(thresholds.spam) || !std::isfinite(thresholds.ham) ||
      thresholds.ham > thresholds.spam) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the thresholds must be finite, ham_threshold not above spam_threshold");
  }
  if (options_.thresholds_from_feedback) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "with verdict_thresholds = feedback the thresholds bound the feedback's from "
                     "start: a restart changes them");
  }
  auto version = std::make_unique<const model::VerdictThresholds>(thresholds);
  std::lock_guard lock(thresholds_mutex_);
  configured_thresholds_.store(version.get(), std::memory_order_release);
  threshold_versions_.push_back(std::move(version));
  return {};
}

void SpamFilter::SetHistoryFacts(history::FactPolicies facts, std::int64_t clear_facts_ms) {
  auto version = std::make_unique<const history::FactPolicies>(facts);
  std::lock_guard lock(fact_policies_mutex_);
  fact_policies_.store(version.get(), std::memory_order_release);
  fact_policy_versions_.push_back(std::move(version));
  if (history::ScanHistory* history = history_.load(std::memory_order_acquire)) {
    history->SetClearFactsAge(clear_facts_ms);
  }
}

void SpamFilter::EnableHistory(std::unique_ptr<history::ScanHistory> history,
                               HistoryOptions options) {
  SetHistoryFacts(options.facts, history->ClearFactsAge());
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
  summary.scan_id = outcome.scan_id.empty() ? scan_ids_->Next(now) : outcome.scan_id;
  summary.time_ms = history::ScanIdTime(summary.scan_id).value_or(now);
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
  const history::FactPolicies& policies = *fact_policies_.load(std::memory_order_acquire);
  summary.facts = history::KeptFacts({.message_id = facts.message_id,
                                      .from_domain = facts.from_domain,
                                      .subject = facts.subject,
                                      .client = std::string(request.client),
                                      .recipients = std::string(request.recipients)},
                                     policies, history->fact_key());
  const std::size_t top = std::min(outcome.result.explanations.size(), history_options_.explain);
  record.detail.top.reserve(top);
  for (std::size_t i = 0; i < top; ++i) {
    const model::TokenExplanation& token = outcome.result.explanations[i];
    // A fact kept as a hash or not at all does not show through its tokens either.
    record.detail.top.push_back(
        {history::KeptTokenText(token.token, token.source, policies, history->fact_key()),
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
  status.training_writer_exceptions = writer_.GroupExceptions();
  status.background_task_exceptions = BackgroundTaskExceptions().load(std::memory_order_relaxed);
  status.replication = Cluster();
  if (const history::ScanHistory* history = History()) status.history = history->Figures();
  status.autolearn = Autolearn();
  status.expiry = upkeep_.Expiry();
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
  const auto [message, label, id, source, user, count_all, front_end] = train;
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
      LearnedMark mark = MarkOf(check.scan->summary.scan_id, false, source, user, front_end);
      return LearnScan(std::move(*check.scan), label, source, user,
                       Noting(std::move(mark), std::move(done)), count_all,
                       std::move(check.outcome));
    }
    scan_header = std::move(check.outcome);
  }
  done = Noting(MarkOf("", id.has_value(), source, user, front_end), std::move(done));
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
  if (replication_) {
    TrainingChange event;
    event.kind = TrainingChange::Kind::kLearn;
    event.id = outcome.id;
    event.label = outcome.label;
    event.tokens = std::move(bag.entries);
    event.origin = std::move(origin);
    event.count_all = count_all;
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
  ForgetNoting(request, std::move(caller_done), std::nullopt);
}

void SpamFilter::ForgetNoting(const ForgetRequest& request, ForgetDone caller_done,
                              std::optional<LearnedMark> mark) {
  ForgetDone done = Timed(std::move(caller_done));
  std::string content_id;
  if (!request.id) {
    if (auto ok = RequireMessage(request.message); !ok) {
      return done(std::unexpected(std::move(ok.error())));
    }
    if (ScanHeaderCheck check = OwnScanOf(request.message); check.scan) {
      content_id = std::move(check.scan->summary.message_key);  // As TrainAsync learned it.
      if (!mark) {
        mark = MarkOf(check.scan->summary.scan_id, false, request.source, request.user,
                      request.front_end);
      }
    } else {
      content_id = ContentId(request.message);
    }
  }
  if (!mark) {
    mark = MarkOf("", request.id.has_value(), request.source, request.user, request.front_end);
  }
  done = Noting(std::move(*mark), std::move(done));
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
  LearnedMark mark{.scan_id = std::string(request.scan_id),
                   .user = "",
                   .how = history::kLearnedByScanId,
                   .by = std::string(request.source)};
  LearnScan(std::move(*scan), request.label, request.source, request.user,
            Noting(std::move(mark), std::move(done)), request.count_all);
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
  ForgetNoting({.id = scan->summary.message_key, .source = request.source, .user = user},
               std::move(done),
               LearnedMark{.scan_id = std::string(request.scan_id),
                           .user = "",
                           .how = history::kLearnedByScanId,
                           .by = std::string(request.source)});
}

SpamFilter::LearnedMark SpamFilter::MarkOf(std::string scan_id, bool by_id, std::string_view source,
                                           std::optional<std::string_view> user,
                                           std::string_view front_end) {
  const bool spamd = front_end == "spamd";
  std::string_view how = spamd ? history::kLearnedBySpamd : history::kLearnedByMessage;
  if (!scan_id.empty() && !spamd) how = history::kLearnedByScanHeader;
  if (scan_id.empty() && by_id) how = history::kLearnedByMessageId;
  return {.scan_id = std::move(scan_id),
          .user = user ? std::string(*user) : std::string(),
          .how = how,
          .by = std::string(source)};
}

void SpamFilter::NoteLearned(const LearnedMark& mark, std::string_view message_key,
                             std::string label, bool checked) const {
  history::ScanHistory* history = history_.load(std::memory_order_acquire);
  if (history == nullptr) return;
  history::LearnedChange change{.label = std::move(label),
                                .time_ms = SystemUnixMillis(),
                                .how = std::string(mark.how),
                                .by = mark.by,
                                .checked = checked};
  if (!mark.scan_id.empty()) return history->RecordLearned(mark.scan_id, change);
  history->RecordLearnedByKey(mark.user, std::string(message_key), std::move(change));
}

TrainDone SpamFilter::Noting(LearnedMark mark, TrainDone done) const {
  if (History() == nullptr) return done;
  return [this, mark = std::move(mark),
          done = std::move(done)](std::expected<TrainOutcome, Error> outcome) mutable {
    if (outcome) {
      NoteLearned(mark, outcome->id, outcome->label,
                  outcome->status == model::LearnStatus::kChecked && !outcome->queued);
    }
    done(std::move(outcome));
  };
}

ForgetDone SpamFilter::Noting(LearnedMark mark, ForgetDone done) const {
  if (History() == nullptr) return done;
  return [this, mark = std::move(mark),
          done = std::move(done)](std::expected<ForgetOutcome, Error> outcome) mutable {
    if (outcome) NoteLearned(mark, outcome->id, "");
    done(std::move(outcome));
  };
}

void SpamFilter::SubmitForget(TrainingChange event, ForgetDone done) {
  std::string id = event.id;
  replication_->Submit(std::move(event), [id = std::move(id), done = std::move(done)](
                                             std::expected<Replicated, Error> replicated) mutable {
    if (!replicated) return done(std::unexpected(std::move(replicated.error())));
    done(ForgetOutcome{std::move(id), std::move(replicated->stream_id), !replicated->status});
  });
}

std::expected<void, Error> SpamFilter::SetAutolearn(AutolearnOptions options) {
  if (!(options.ham_confidence > 0 && options.ham_confidence < options.spam_confidence &&
        options.spam_confidence < 1) ||
      !(options.max_class_ratio >= 1) || options.queue_limit == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "autolearn needs 0 < ham confidence < spam confidence < 1, a class ratio of "
                     "at least 1 and a queue limit of at least 1");
  }
  if (options.enabled && replication_) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "autolearn is not available in cluster mode: set autolearn = false");
  }
  autolearner_->SetOptions(options);
  return {};
}

std::expected<void, Error> SpamFilter::EnableReplication(TrainingLogStart start) {
  if (autolearner_->options().enabled) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "autolearn is not available in cluster mode: set autolearn = false");
  }
  auto log = start(*store_, writer_);
  if (!log) return std::unexpected(std::move(log.error()));
  replication_ = std::move(*log);
  return {};
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
