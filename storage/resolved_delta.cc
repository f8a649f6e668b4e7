#include "storage/resolved_delta.h"

#include <algorithm>
#include <string>

#include "model/user_layer.h"

namespace nbspamd::storage {
namespace {

bool AllZero(const TokenCounts& counts) {
  return std::all_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n == 0; });
}

// base + change, or an error when the result would be negative.
std::expected<std::uint64_t, Error> AddChecked(std::uint64_t base, std::int64_t change,
                                               const char* what) {
  if (change < 0 && static_cast<std::uint64_t>(-change) > base) {
    return MakeError(ErrorCode::kDataLoss,
                     std::string("training change would make ") + what + " negative");
  }
  return base + static_cast<std::uint64_t>(change);
}

// Applies `changes` to the class token totals and |V| of `stats` and to the counts `counts_of`
// gives, appending each changed token's new counts to `tokens`. `what` names the layer in errors.
template <typename CountsOf>
std::expected<void, Error> ApplyTokenChanges(
    std::vector<model::TokenCountChange> changes, const CountsOf& counts_of, const char* what,
    model::ModelStats& stats, std::vector<std::pair<TokenHash, TokenCounts>>& tokens) {
  const std::size_t class_count = stats.classes.size();
  std::stable_sort(changes.begin(), changes.end(),
                   [](const auto& a, const auto& b) { return a.hash < b.hash; });
  for (std::size_t i = 0; i < changes.size();) {
    const TokenHash hash = changes[i].hash;
    TokenCounts counts = counts_of(hash);
    const bool was_known = !AllZero(counts);
    counts.resize(std::max(counts.size(), class_count), 0);
    for (; i < changes.size() && changes[i].hash == hash; ++i) {
      const model::TokenCountChange& change = changes[i];
      if (change.class_index >= class_count) {
        return MakeError(ErrorCode::kDataLoss, "training change names an unknown class");
      }
      auto count = AddChecked(counts[change.class_index], change.change,
                              (std::string(what) + "token count").c_str());
      if (!count) return std::unexpected(count.error());
      auto total = AddChecked(stats.classes[change.class_index].tokens, change.change,
                              (std::string(what) + "class token total").c_str());
      if (!total) return std::unexpected(total.error());
      counts[change.class_index] = *count;
      stats.classes[change.class_index].tokens = *total;
    }
    while (!counts.empty() && counts.back() == 0) counts.pop_back();
    const bool is_known = !counts.empty();
    if (is_known && !was_known) ++stats.vocabulary_size;
    if (!is_known && was_known) --stats.vocabulary_size;
    tokens.emplace_back(hash, std::move(counts));
  }
  return {};
}

// Applies `changes` to the document counts of `stats`.
std::expected<void, Error> ApplyDocumentChanges(
    const std::vector<model::DocumentCountChange>& changes, const char* what,
    model::ModelStats& stats) {
  for (const model::DocumentCountChange& change : changes) {
    if (change.class_index >= stats.classes.size()) {
      return MakeError(ErrorCode::kDataLoss, "training change names an unknown class");
    }
    auto documents = AddChecked(stats.classes[change.class_index].documents, change.change,
                                (std::string(what) + "document count").c_str());
    if (!documents) return std::unexpected(documents.error());
    stats.classes[change.class_index].documents = *documents;
  }
  return {};
}

// The key a user ledger record is known by in failed_user_ledger_ids_.
std::string UserLedgerName(const model::UserLayerChange& change) {
  std::string name = change.user;
  name += '\0';
  name += change.ledger_id;
  return name;
}

}  // namespace

DeltaResolver::DeltaResolver(const CountCache& cache, UserLayerLoader users,
                             std::uint64_t user_token_limit)
    : cache_(cache),
      stats_(*cache.Stats()),
      feedback_(*cache.Feedback()),
      users_loader_(std::move(users)),
      user_token_limit_(user_token_limit) {}

TokenCounts DeltaResolver::CountsOf(TokenHash hash) const {
  if (const auto it = tokens_.find(hash); it != tokens_.end()) return it->second;
  return cache_.Get(hash);
}

std::expected<void, Error> DeltaResolver::Add(const model::Delta& delta) {
  auto resolved = Resolve(delta);
  if (!resolved && !delta.ledger_id.empty()) failed_ledger_ids_.insert(delta.ledger_id);
  if (!resolved && delta.user && !delta.user->ledger_id.empty()) {
    failed_user_ledger_ids_.insert(UserLedgerName(*delta.user));
  }
  return resolved;
}

std::expected<void, Error> DeltaResolver::Resolve(const model::Delta& delta) {
  if (!delta.ledger_id.empty() && failed_ledger_ids_.contains(delta.ledger_id)) {
    return MakeError(ErrorCode::kDataLoss,
                     "an earlier change to message '" + delta.ledger_id + "' in the batch failed");
  }
  // Work on copies; fold them in only when the whole delta is valid.
  model::ModelStats stats = stats_;
  for (const std::string& label : delta.new_classes) {
    if (stats.FindClass(label)) {
      return MakeError(ErrorCode::kInternal, "class '" + label + "' exists already");
    }
    stats.classes.push_back({label, 0, 0});
  }
  if (auto documents = ApplyDocumentChanges(delta.document_changes, "a ", stats); !documents) {
    return documents;
  }
  std::vector<std::pair<TokenHash, TokenCounts>> tokens;
  const auto global_counts = [this](TokenHash hash) { return CountsOf(hash); };
  if (auto changed = ApplyTokenChanges(delta.token_changes, global_counts, "a ", stats, tokens);
      !changed) {
    return changed;
  }

  // The user part, on copies too.
  UserState* user = nullptr;
  model::ModelStats user_stats;
  std::vector<std::pair<TokenHash, TokenCounts>> user_tokens;
  if (delta.user) {
    const model::UserLayerChange& change = *delta.user;
    if (auto valid = model::CheckUserId(change.user); !valid) return valid;
    if (!change.ledger_id.empty() && failed_user_ledger_ids_.contains(UserLedgerName(change))) {
      return MakeError(ErrorCode::kDataLoss, "an earlier change to message '" + change.ledger_id +
                                                 "' of user '" + change.user +
                                                 "' in the batch failed");
    }
    if (!users_loader_) {
      return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no user layers");
    }
    auto found = users_.find(change.user);
    if (found == users_.end()) {
      auto layer = users_loader_(change.user);
      if (!layer) return std::unexpected(layer.error());
      UserState state;
      state.layer = std::move(*layer);
      state.stats = *state.layer->Stats();
      state.existed = !IsEmptyLayer(state.stats);
      found = users_.emplace(change.user, std::move(state)).first;
    }
    user = &found->second;
    user_stats = user->stats;
    if (user_stats.classes.size() > stats.classes.size()) {
      return MakeError(ErrorCode::kDataLoss,
                       "the layer of user '" + change.user + "' has classes the model lacks");
    }
    for (std::size_t c = user_stats.classes.size(); c < stats.classes.size(); ++c) {
      user_stats.classes.push_back({stats.classes[c].label, 0, 0});
    }
    if (auto documents = ApplyDocumentChanges(change.document_changes, "a user's ", user_stats);
        !documents) {
      return documents;
    }
    const auto user_counts = [user](TokenHash hash) {
      if (const auto it = user->tokens.find(hash); it != user->tokens.end()) return it->second;
      return user->layer->Get(hash);
    };
    if (auto changed = ApplyTokenChanges(change.token_changes, user_counts, "a user's ", user_stats,
                                         user_tokens);
        !changed) {
      return changed;
    }
    if (user_token_limit_ > 0 && user_stats.vocabulary_size > user_token_limit_ &&
        user_stats.vocabulary_size > user->stats.vocabulary_size) {
      return MakeError(ErrorCode::kResourceExhausted,
                       "user '" + change.user + "' would have " +
                           std::to_string(user_stats.vocabulary_size) +
                           " distinct tokens, over the limit of " +
                           std::to_string(user_token_limit_) + "; nothing was learned");
    }
  }

  // The feedback cells: at most a few per delta, checked together before any is applied.
  std::vector<std::pair<std::uint64_t*, std::uint64_t>> feedback;
  for (const model::FeedbackChange& change : delta.feedback_changes) {
    std::vector<std::uint64_t>& cells = change.spam ? feedback_.spam : feedback_.ham;
    if (change.bin >= cells.size()) {
      return MakeError(ErrorCode::kDataLoss, "training change names an unknown calibration bin");
    }
    std::uint64_t* cell = &cells[change.bin];
    std::uint64_t base = *cell;
    for (const auto& [earlier, value] : feedback) {
      if (earlier == cell) base = value;
    }
    auto count = AddChecked(base, change.change, "a feedback count");
    if (!count) return std::unexpected(count.error());
    feedback.emplace_back(cell, *count);
  }

  stats_ = std::move(stats);
  for (auto& [hash, counts] : tokens) tokens_.insert_or_assign(hash, std::move(counts));
  for (const auto& [cell, value] : feedback) *cell = value;
  feedback_changed_ = feedback_changed_ || !feedback.empty();
  if (user != nullptr) {
    user->stats = std::move(user_stats);
    for (auto& [hash, counts] : user_tokens) user->tokens.insert_or_assign(hash, std::move(counts));
    user->changed = true;
  }
  return {};
}

ResolvedDelta DeltaResolver::Take() && {
  ResolvedDelta resolved{{}, std::move(stats_), std::nullopt, {}};
  if (feedback_changed_) resolved.feedback = std::move(feedback_);
  resolved.tokens.reserve(tokens_.size());
  for (auto& [hash, counts] : tokens_) resolved.tokens.emplace_back(hash, std::move(counts));
  const auto by_hash = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::sort(resolved.tokens.begin(), resolved.tokens.end(), by_hash);
  for (auto& [name, state] : users_) {
    if (!state.changed) continue;
    ResolvedUser user{name, std::move(state.layer), {}, std::move(state.stats), state.existed};
    user.tokens.reserve(state.tokens.size());
    for (auto& [hash, counts] : state.tokens) user.tokens.emplace_back(hash, std::move(counts));
    std::sort(user.tokens.begin(), user.tokens.end(), by_hash);
    resolved.users.push_back(std::move(user));
  }
  return resolved;
}

}  // namespace nbspamd::storage
