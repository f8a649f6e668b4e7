#include "core/model_upkeep.h"

#include <future>
#include <string>
#include <utility>
#include <vector>

#include "storage/expiry_bounds.h"

namespace nbspamd::core {
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

// Submits every one of `changes` to `log`; `done` gets 0 once the log has them all, or the first
// error.
void SubmitAll(TrainingLog& log, std::vector<TrainingChange> changes,
               std::move_only_function<void(std::expected<std::uint64_t, Error>)> done) {
  auto submitted = std::make_shared<Submitted>();
  submitted->left = changes.size();
  submitted->done = std::move(done);
  for (TrainingChange& change : changes) {
    log.Submit(std::move(change),
               [submitted](std::expected<Replicated, Error> r) { submitted->One(std::move(r)); });
  }
}

}  // namespace

void ModelUpkeep::ExpireTokensAsync(const storage::TokenExpiryRule& rule, ExpireTokensDone done) {
  if (!log_) {
    return ExpirySteps::Next(
        std::unique_ptr<ExpirySteps>(new ExpirySteps{writer_, rule, 0, std::move(done)}), 0);
  }
  // Through the stream, in steps every daemon takes alike: the hash space in equal ranges, about
  // kExpiryStepTokens tokens each (token hashes are uniform).
  const std::vector<TokenHash> bounds =
      storage::TokenExpiryBounds(store_.Stats()->vocabulary_size, kExpiryStepTokens);
  std::vector<TrainingChange> steps(bounds.size() + 1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].kind = TrainingChange::Kind::kExpire;
    steps[i].expiry_rule = rule;
    steps[i].expiry_from = i > 0 ? bounds[i - 1] : 0;
    if (i < bounds.size()) steps[i].expiry_until = bounds[i];
  }
  SubmitAll(*log_, std::move(steps), std::move(done));
}

void ModelUpkeep::ExpireUserTokensAsync(const storage::TokenExpiryRule& rule,
                                        ExpireTokensDone done) {
  if (!log_) {
    return UserExpirySteps::Next(
        std::unique_ptr<UserExpirySteps>(new UserExpirySteps{writer_, rule, 0, std::move(done)}),
        "");
  }
  // Through the stream, in steps every daemon takes alike: ranges of users' keys of about
  // kExpiryStepTokens tokens each, cut from the layers' sizes.
  auto users = store_.ListAllUsers();
  if (!users) return done(std::unexpected(std::move(users.error())));
  const std::vector<std::string> bounds = storage::UserExpiryBounds(*users, kExpiryStepTokens);
  std::vector<TrainingChange> steps(bounds.size() + 1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].kind = TrainingChange::Kind::kExpireUsers;
    steps[i].expiry_rule = rule;
    if (i > 0) steps[i].user_expiry_from = bounds[i - 1];
    if (i < bounds.size()) steps[i].user_expiry_until = bounds[i];
  }
  SubmitAll(*log_, std::move(steps), std::move(done));
}

std::expected<std::uint64_t, Error> ModelUpkeep::ExpireUserTokens(
    const storage::TokenExpiryRule& rule) {
  std::promise<std::expected<std::uint64_t, Error>> outcome;
  auto future = outcome.get_future();
  ExpireUserTokensAsync(rule, [&outcome](std::expected<std::uint64_t, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

std::expected<std::uint64_t, Error> ModelUpkeep::ExpireTokens(
    const storage::TokenExpiryRule& rule) {
  std::promise<std::expected<std::uint64_t, Error>> outcome;
  auto future = outcome.get_future();
  ExpireTokensAsync(rule, [&outcome](std::expected<std::uint64_t, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

ExpiryFigures ModelUpkeep::Expiry() const {
  ExpiryFigures figures;
  {
    std::lock_guard lock(mutex_);
    figures = passes_;
  }
  figures.retired_records = writer_.RetiredRecords();
  figures.dropped_tokens = writer_.DroppedTokens();
  figures.retired_user_records = writer_.RetiredUserRecords();
  figures.dropped_user_tokens = writer_.DroppedUserTokens();
  return figures;
}

void ModelUpkeep::NoteExpiryPass(std::int64_t ended_at, double seconds, bool cap_met,
                                 bool age_rule_waiting) {
  std::lock_guard lock(mutex_);
  ++passes_.passes;
  passes_.last_pass_end = ended_at;
  passes_.last_pass_seconds = seconds;
  passes_.cap_met = cap_met;
  passes_.age_rule_waiting = age_rule_waiting;
}

void ModelUpkeep::RetireLedgerAsync(std::int64_t learned_before, RetireLedgerDone done) {
  if (!log_) {
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
    auto starts = store_.RetireStepStarts(learned_before, kRetireStepRecords, users,
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
  SubmitAll(*log_, std::move(steps), std::move(done));
}

std::expected<std::uint64_t, Error> ModelUpkeep::RetireLedger(std::int64_t learned_before) {
  std::promise<std::expected<std::uint64_t, Error>> outcome;
  auto future = outcome.get_future();
  RetireLedgerAsync(learned_before, [&outcome](std::expected<std::uint64_t, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

}  // namespace nbspamd::core
