#include "core/training_writer.h"

#include <cmath>
#include <exception>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/handler_guard.h"
#include "common/log.h"
#include "common/utc_time.h"
#include "core/pending_model.h"
#include "model/calibration.h"
#include "model/classifier.h"
#include "model/user_layer.h"

namespace nbspamd::core {
namespace {

// The answer to a forget, or a relearn as another class, of a message whose record the ledger
// retention retired.
std::unexpected<Error> RetiredError(const std::string& id, const model::LedgerEntry& learned) {
  return MakeError(ErrorCode::kExpired,
                   "message '" + id + "' was learned at " + UtcTimeText(learned.origin.learned_at) +
                       ", longer ago than the ledger retention keeps what a message added: its "
                       "counts are part of the base counts now, and it can no longer be "
                       "forgotten or learned as another class");
}

// What planning a request of a group left behind.
struct Plan {
  std::optional<std::size_t> delta;           // Its delta's index in the group's deltas.
  std::optional<std::size_t> read_from;       // The earlier delta whose ledger record it read.
  std::optional<std::size_t> user_read_from;  // The same for the user's ledger record.
};

// A user's record of message `id`, as a key of the group's own state (a user id holds no 0).
std::string UserRecordName(std::string_view user, std::string_view id) {
  std::string name(user);
  name += '\0';
  name += id;
  return name;
}

// The score the model in `pending` gives `bag`: the held-out score of a message about to be
// learned; nullopt when the model gives none (spam or ham has no documents).
std::optional<model::HeldOutScore> HeldOutScoreOf(const TokenBag& bag, const PendingModel& pending,
                                                  const HeldOutScoring& scoring) {
  const model::Snapshot snapshot = pending.Read(bag.entries);
  const auto result = model::Classify(bag, snapshot,
                                      {.alpha = scoring.alpha,
                                       .score_min_weight = scoring.score_min_weight,
                                       .score_form = scoring.score_form,
                                       .char_ngram_share = scoring.char_ngram_share});
  if (!result || !result->score || !std::isfinite(*result->score)) return std::nullopt;
  return model::HeldOutScore{model::kScoreScale, *result->score};
}

}  // namespace

TrainingWriter::TrainingWriter(storage::Store& store, GroupLimits limits, HeldOutScoring scoring,
                               TrainingRegime regime, RecentFeedback* recent)
    : store_(store),
      limits_(limits),
      scoring_(scoring),
      regime_(regime),
      recent_(recent),
      thread_([this] { Run(); }) {
  // Before any request can be queued (no one holds the writer yet), so the writer thread's later
  // calls see what this one loaded.
  if (recent_ != nullptr) {
    if (auto loaded = recent_->Load(store_); !loaded) {
      LogWarning("the recent feedback could not be read; the configured thresholds hold",
                 {{"error", loaded.error().message}});
    }
  }
}

TrainingWriter::~TrainingWriter() { Stop(); }

void TrainingWriter::Learn(LearnRequest request, LearnCompletion done,
                           std::string stream_position) {
  Request queued;
  queued.id = std::move(request.id);
  queued.label = std::move(request.label);
  queued.bag = std::move(request.bag);
  queued.origin = std::move(request.origin);
  queued.count_all = request.count_all;
  queued.done = std::move(done);
  queued.stream_position = std::move(stream_position);
  Submit(std::move(queued));
}

void TrainingWriter::Forget(std::string id, ForgetCompletion done,
                            std::optional<std::string> only_source, std::string stream_position) {
  Request queued;
  queued.kind = Kind::kForget;
  queued.id = std::move(id);
  queued.done = std::move(done);
  queued.only_source = std::move(only_source);
  queued.stream_position = std::move(stream_position);
  Submit(std::move(queued));
}

void TrainingWriter::LearnForUser(LearnRequest request, UserTarget target, LearnCompletion done,
                                  std::string stream_position) {
  Request queued;
  queued.stream_position = std::move(stream_position);
  queued.id = std::move(request.id);
  queued.label = std::move(request.label);
  queued.bag = std::move(request.bag);
  queued.origin = std::move(request.origin);
  queued.count_all = request.count_all;
  queued.done = std::move(done);
  queued.user = std::move(target.user);
  queued.train_global = target.train_global;
  Submit(std::move(queued));
}

void TrainingWriter::ForgetForUser(std::string id, UserTarget target, ForgetCompletion done,
                                   std::optional<std::string> only_source,
                                   std::string stream_position) {
  Request queued;
  queued.stream_position = std::move(stream_position);
  queued.only_source = std::move(only_source);
  queued.kind = Kind::kForget;
  queued.id = std::move(id);
  queued.done = std::move(done);
  queued.user = std::move(target.user);
  queued.train_global = target.train_global;
  Submit(std::move(queued));
}

void TrainingWriter::RetireLedger(std::int64_t learned_before, std::size_t max_records,
                                  RetireCompletion done, std::string stream_position,
                                  std::string from, RetireScope scope) {
  Request queued;
  queued.retire_scope = scope;
  queued.stream_position = std::move(stream_position);
  queued.kind = Kind::kRetire;
  queued.done = std::move(done);
  queued.retire_before = learned_before;
  queued.retire_max = max_records;
  queued.retire_from = std::move(from);
  Submit(std::move(queued));
}

void TrainingWriter::ExpireTokens(const storage::TokenExpiryRule& rule, TokenHash from,
                                  std::size_t max_examined, std::optional<TokenHash> until,
                                  ExpireCompletion done, std::string stream_position) {
  Request queued;
  queued.stream_position = std::move(stream_position);
  queued.kind = Kind::kExpire;
  queued.done = std::move(done);
  queued.expiry_rule = rule;
  queued.expiry_from = from;
  queued.expiry_until = until;
  queued.retire_max = max_examined;
  Submit(std::move(queued));
}

void TrainingWriter::ExpireUserTokens(const storage::TokenExpiryRule& rule, std::string from,
                                      std::size_t max_examined, std::optional<std::string> until,
                                      UserExpireCompletion done, std::string stream_position) {
  Request queued;
  queued.stream_position = std::move(stream_position);
  queued.kind = Kind::kExpireUsers;
  queued.done = std::move(done);
  queued.expiry_rule = rule;
  queued.user_expiry_from = std::move(from);
  queued.user_expiry_until = std::move(until);
  queued.retire_max = max_examined;
  Submit(std::move(queued));
}

void TrainingWriter::DeleteUser(std::string user, ForgetCompletion done,
                                std::string stream_position) {
  Request queued;
  queued.stream_position = std::move(stream_position);
  queued.kind = Kind::kDeleteUser;
  queued.done = std::move(done);
  queued.user = std::move(user);
  Submit(std::move(queued));
}

void TrainingWriter::Submit(Request request) {
  try {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      queue_.push_back(std::move(request));  // Changes nothing when it throws.
      wake_.notify_one();
      return;
    }
  } catch (...) {  // Out of memory queueing it: that request fails, not the daemon.
    NoteHandlerException("training writer", "", group_exceptions_);
    return Complete(request, MakeError(ErrorCode::kInternal,
                                       "the training request failed inside the daemon (logged)"));
  }
  Complete(request, MakeError(ErrorCode::kUnavailable, "the daemon is shutting down"));
}

void TrainingWriter::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  std::lock_guard lock(stop_mutex_);
  if (thread_.joinable()) thread_.join();
}

std::uint64_t TrainingWriter::GroupCount() const {
  std::lock_guard lock(mutex_);
  return groups_;
}

std::uint64_t TrainingWriter::RequestCount() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void TrainingWriter::Run() {
  std::vector<Request>& group = group_;
  while (true) {
    group.clear();
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Stopping, and everything queued is done.
      std::size_t tokens = 0;
      while (!queue_.empty() && group.size() < limits_.max_requests) {
        // A DeleteUser or a RetireLedger is a group of its own: written after the requests
        // before it, before those after it.
        const auto alone = [](const Request& r) {
          return r.kind == Kind::kDeleteUser || r.kind == Kind::kRetire ||
                 r.kind == Kind::kExpire || r.kind == Kind::kExpireUsers;
        };
        if (!group.empty() && (alone(queue_.front()) || alone(group.back()))) break;
        tokens += queue_.front().bag.entries.size();
        if (!group.empty() && tokens > limits_.max_tokens) break;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    std::vector<Result> results;
    try {
      if (group.front().kind == Kind::kDeleteUser) {
        results.push_back(CommitDeleteUser(group.front()));
      } else if (group.front().kind == Kind::kRetire) {
        results.push_back(CommitRetire(group.front()));
      } else if (group.front().kind == Kind::kExpire) {
        results.push_back(CommitExpire(group.front()));
      } else if (group.front().kind == Kind::kExpireUsers) {
        results.push_back(CommitExpireUsers(group.front()));
      } else {
        results = Commit(group);
      }
    } catch (...) {
      // A bug or an allocation failure, whatever it throws: fail the group rather than the
      // daemon (noted and counted), and go on with the next.
      NoteHandlerException("training writer", "", group_exceptions_);
      results.assign(group.size(), MakeError(ErrorCode::kInternal,
                                             "the training request failed inside the daemon "
                                             "(logged)"));
    }
    for (std::size_t i = 0; i < group.size(); ++i) Complete(group[i], std::move(results[i]));
    std::lock_guard lock(mutex_);
    ++groups_;
    requests_ += group.size();
  }
}

TrainingWriter::Result TrainingWriter::CommitDeleteUser(const Request& request) {
  auto deleted = store_.DeleteUser(request.user, request.stream_position);
  if (!deleted) return std::unexpected(std::move(deleted.error()));
  return model::LearnStatus::kLearned;
}

std::vector<TrainingWriter::Result> TrainingWriter::Commit(const std::vector<Request>& group) {
  std::vector<Result> results;
  results.reserve(group.size());
  std::vector<Plan> plans(group.size());
  std::vector<model::Delta> deltas;
  // The group's own state: the delta that last wrote each id's ledger record (and each user's
  // record of an id, by UserRecordName), and the model as the group's planned deltas leave it
  // (its class list, and the counts held-out scores read).
  std::unordered_map<std::string_view, std::size_t> written;
  std::unordered_map<std::string, std::size_t> written_by_users;
  PendingModel pending(store_);

  for (std::size_t i = 0; i < group.size(); ++i) {
    const Request& request = group[i];
    Plan& plan = plans[i];
    const bool has_user = !request.user.empty();
    const bool global = !has_user || request.train_global;
    std::optional<model::LedgerEntry> learned;
    if (!global) {
      // The global ledger plays no part.
    } else if (const auto it = written.find(request.id); it != written.end()) {
      plan.read_from = it->second;
      learned = deltas[it->second].ledger_entry;
    } else {
      auto found = store_.FindLearned(request.id);
      if (!found) {
        results.push_back(std::unexpected(std::move(found.error())));
        continue;
      }
      learned = std::move(*found);
    }
    std::optional<model::LedgerEntry> user_learned;
    const std::string user_record = has_user ? UserRecordName(request.user, request.id) : "";
    if (!has_user) {
      // No user ledger plays a part.
    } else if (const auto it = written_by_users.find(user_record); it != written_by_users.end()) {
      plan.user_read_from = it->second;
      user_learned = deltas[it->second].user->ledger_entry;
    } else {
      auto found = store_.FindUserLearned(request.user, request.id);
      if (!found) {
        results.push_back(std::unexpected(std::move(found.error())));
        continue;
      }
      user_learned = std::move(*found);
    }

    // A retired user record, as a retired global one: neither forgotten nor relearned as another
    // class, and the request changes nothing (a learn with its own label is unchanged anyway).
    if (user_learned && user_learned->retired &&
        (request.kind == Kind::kForget || user_learned->label != request.label)) {
      results.push_back(RetiredError(request.id, *user_learned));
      continue;
    }
    std::optional<model::Delta> delta;
    bool global_changed = false;
    // A retired record can be neither forgotten nor moved to another class (its counts are in
    // the base counts); a learn with its own label changes nothing, as for any record.
    const bool retired = global && learned && learned->retired;
    if (retired && ((request.kind == Kind::kLearn && learned->label != request.label) ||
                    (request.kind == Kind::kForget && !has_user))) {
      results.push_back(RetiredError(request.id, *learned));
      continue;
    }
    if (request.kind == Kind::kLearn) {
      model::LearnPlan learn;  // kUnchanged, an empty delta: the global part when it plays none.
      bool still_checked = false;  // A checked record learned again, and still not counted.
      if (global && !retired) {
        // A new id is scored (its held-out score); under error-driven training so is a checked
        // record learned again with its label, to decide whether it is counted now.
        const bool checked_again = learned && learned->checked && learned->label == request.label;
        std::optional<model::HeldOutScore> score;
        if (!learned || (checked_again && regime_.margin)) {
          score = HeldOutScoreOf(request.bag, pending, scoring_);
        }
        // A correction is always counted (it was an error); an id counted before stays so.
        const std::optional<std::size_t> class_index = pending.stats().FindClass(request.label);
        const std::uint64_t class_documents =
            class_index ? pending.stats().classes[*class_index].documents : 0;
        const bool count =
            (learned && !checked_again) || request.count_all ||
            regime_.Counts(request.label, score ? std::optional(score->score) : std::nullopt,
                           class_documents);
        learn = model::PlanLearn(request.id, request.label, request.bag, learned, pending.stats(),
                                 request.origin, learned ? std::nullopt : score, count);
        global_changed = learn.status != model::LearnStatus::kUnchanged;
        still_checked = checked_again && !count;
      }
      model::LearnStatus status = learn.status;
      if (has_user) {
        status = model::AddUserLearn(learn.delta, request.user, request.id, request.label,
                                     request.bag, user_learned, pending.stats(), request.origin);
      }
      if (global_changed || status != model::LearnStatus::kUnchanged) {
        delta = std::move(learn.delta);
      }
      // Nothing to write, but the answer says the message is still only checked.
      results.push_back(status == model::LearnStatus::kUnchanged && still_checked
                            ? model::LearnStatus::kChecked
                            : status);
    } else if (has_user) {
      if (!user_learned) {
        results.push_back(MakeError(
            ErrorCode::kNotFound,
            "user '" + request.user + "' learned no message with id '" + request.id + "'"));
      } else if (request.only_source && user_learned->origin.source != *request.only_source) {
        results.push_back(MakeError(ErrorCode::kNotFound, "user '" + request.user +
                                                              "' learned message '" + request.id +
                                                              "' through another source"));
      } else {
        results.push_back(model::LearnStatus::kLearned);
        // A rollback forgets the global record only if it too came from that source.
        const bool forget_global =
            learned && !retired &&
            (!request.only_source || learned->origin.source == *request.only_source);
        delta = forget_global ? model::PlanForget(request.id, *learned, pending.stats())
                              : model::Delta{};
        global_changed = forget_global;
        model::AddUserForget(*delta, request.user, request.id, *user_learned, pending.stats());
      }
    } else if (!learned) {
      results.push_back(
          MakeError(ErrorCode::kNotFound, "no message was learned with id '" + request.id + "'"));
    } else if (request.only_source && learned->origin.source != *request.only_source) {
      results.push_back(MakeError(
          ErrorCode::kNotFound, "message '" + request.id + "' was learned through another source"));
    } else {
      results.push_back(model::LearnStatus::kLearned);
      delta = model::PlanForget(request.id, *learned, pending.stats());
      global_changed = true;
    }
    if (delta) {
      // The last request's delta is read by nothing after it.
      if (i + 1 < group.size()) pending.Fold(*delta);
      plan.delta = deltas.size();
      if (global_changed) written.insert_or_assign(request.id, deltas.size());
      if (delta->user) written_by_users.insert_or_assign(user_record, deltas.size());
      deltas.push_back(std::move(*delta));
    }
  }
  // The group's last stream position goes into its write on its own, so it is stored whatever
  // the requests' outcomes (ApplyBatch keeps the position of the last delta that applies).
  for (auto it = group.rbegin(); it != group.rend(); ++it) {
    if (it->stream_position.empty()) continue;
    model::Delta position;
    position.stream_position = it->stream_position;
    deltas.push_back(std::move(position));
    break;
  }
  if (deltas.empty()) return results;

  auto applied = store_.ApplyBatch(deltas);
  if (applied && recent_ != nullptr) {
    if (auto taken = recent_->Applied(store_, deltas, *applied); !taken) {
      LogWarning("the recent feedback could not be read again; the configured thresholds hold",
                 {{"error", taken.error().message}});
    }
  }
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Plan& plan = plans[i];
    if (!applied) {
      // Nothing of the group was written: every answer that rests on it fails.
      if (plan.delta || plan.read_from || plan.user_read_from)
        results[i] = std::unexpected(applied.error());
      continue;
    }
    if (plan.delta && !(*applied)[*plan.delta]) {
      results[i] = std::unexpected((*applied)[*plan.delta].error());
    } else if ((plan.read_from && !(*applied)[*plan.read_from]) ||
               (plan.user_read_from && !(*applied)[*plan.user_read_from])) {
      results[i] = MakeError(ErrorCode::kDataLoss, "an earlier change to message '" + group[i].id +
                                                       "' in the same commit failed");
    }
  }
  return results;
}

TrainingWriter::Result TrainingWriter::CommitRetire(Request& request) {
  const RetireScope scope = request.retire_scope;
  if (scope != RetireScope::kUsers) {
    auto step = store_.RetireLedger(request.retire_before, request.retire_max,
                                    scope == RetireScope::kAll ? "" : request.stream_position,
                                    request.retire_from);
    if (!step) return std::unexpected(std::move(step.error()));
    request.retired = *step;
    retired_records_.fetch_add(step->retired, std::memory_order_relaxed);
  }
  if (scope != RetireScope::kGlobal) {
    auto step = store_.RetireUserLedgers(request.retire_before, request.retire_max,
                                         request.stream_position, request.retire_from);
    if (!step) return std::unexpected(std::move(step.error()));
    retired_user_records_.fetch_add(step->retired, std::memory_order_relaxed);
    const std::uint64_t global = request.retired.retired;
    request.retired = *step;
    request.retired.retired += global;
  }
  return model::LearnStatus::kLearned;
}

TrainingWriter::Result TrainingWriter::CommitExpireUsers(Request& request) {
  auto step =
      store_.ExpireUserTokens(request.expiry_rule, request.user_expiry_from, request.retire_max,
                              request.user_expiry_until, request.stream_position);
  if (!step) return std::unexpected(std::move(step.error()));
  request.user_expired = *step;
  dropped_user_tokens_.fetch_add(step->dropped, std::memory_order_relaxed);
  return model::LearnStatus::kLearned;
}

TrainingWriter::Result TrainingWriter::CommitExpire(Request& request) {
  auto step = store_.ExpireTokens(request.expiry_rule, request.expiry_from, request.retire_max,
                                  request.expiry_until, request.stream_position);
  if (!step) return std::unexpected(std::move(step.error()));
  request.expired = *step;
  dropped_tokens_.fetch_add(step->dropped, std::memory_order_relaxed);
  return model::LearnStatus::kLearned;
}

void TrainingWriter::Complete(Request& request, Result result) noexcept {
  try {
    if (auto* learn = std::get_if<LearnCompletion>(&request.done)) {
      (*learn)(std::move(result));
    } else if (auto* retire = std::get_if<RetireCompletion>(&request.done)) {
      if (result) {
        (*retire)(request.retired);
      } else {
        (*retire)(std::unexpected(std::move(result.error())));
      }
    } else if (auto* expire = std::get_if<ExpireCompletion>(&request.done)) {
      if (result) {
        (*expire)(request.expired);
      } else {
        (*expire)(std::unexpected(std::move(result.error())));
      }
    } else if (auto* expire_users = std::get_if<UserExpireCompletion>(&request.done)) {
      if (result) {
        (*expire_users)(request.user_expired);
      } else {
        (*expire_users)(std::unexpected(std::move(result.error())));
      }
    } else if (result) {
      std::get<ForgetCompletion>(request.done)({});
    } else {
      std::get<ForgetCompletion>(request.done)(std::unexpected(std::move(result.error())));
    }
  } catch (...) {
    // A completion must not throw; if one does, the others still run. Its caller may never have
    // answered its client: say so.
    completion_exceptions_.fetch_add(1, std::memory_order_relaxed);
    try {
      if (const auto held_back = completion_log_.Admit()) {
        LogError("training writer: a completion threw",
                 {{"id", request.id},
                  {"what", DescribeCurrentException()},
                  {"suppressed", std::to_string(*held_back)}});
      }
    } catch (...) {
    }
  }
}

}  // namespace nbspamd::core
