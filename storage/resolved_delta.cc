#include "storage/resolved_delta.h"

#include <algorithm>
#include <string>

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

}  // namespace

DeltaResolver::DeltaResolver(const CountCache& cache)
    : cache_(cache), stats_(*cache.Stats()), feedback_(cache.Calibration()->histogram()) {}

TokenCounts DeltaResolver::CountsOf(TokenHash hash) const {
  if (const auto it = tokens_.find(hash); it != tokens_.end()) return it->second;
  return cache_.Get(hash);
}

std::expected<void, Error> DeltaResolver::Add(const model::Delta& delta) {
  auto resolved = Resolve(delta);
  if (!resolved && !delta.ledger_id.empty()) failed_ledger_ids_.insert(delta.ledger_id);
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
  const std::size_t class_count = stats.classes.size();

  for (const model::DocumentCountChange& change : delta.document_changes) {
    if (change.class_index >= class_count) {
      return MakeError(ErrorCode::kDataLoss, "training change names an unknown class");
    }
    auto documents =
        AddChecked(stats.classes[change.class_index].documents, change.change, "a document count");
    if (!documents) return std::unexpected(documents.error());
    stats.classes[change.class_index].documents = *documents;
  }

  std::vector<model::TokenCountChange> changes = delta.token_changes;
  std::stable_sort(changes.begin(), changes.end(),
                   [](const auto& a, const auto& b) { return a.hash < b.hash; });
  std::vector<std::pair<TokenHash, TokenCounts>> tokens;
  for (std::size_t i = 0; i < changes.size();) {
    const TokenHash hash = changes[i].hash;
    TokenCounts counts = CountsOf(hash);
    const bool was_known = !AllZero(counts);
    counts.resize(std::max(counts.size(), class_count), 0);
    for (; i < changes.size() && changes[i].hash == hash; ++i) {
      const model::TokenCountChange& change = changes[i];
      if (change.class_index >= class_count) {
        return MakeError(ErrorCode::kDataLoss, "training change names an unknown class");
      }
      auto count = AddChecked(counts[change.class_index], change.change, "a token count");
      if (!count) return std::unexpected(count.error());
      auto total = AddChecked(stats.classes[change.class_index].tokens, change.change,
                              "a class token total");
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
  return {};
}

ResolvedDelta DeltaResolver::Take() && {
  ResolvedDelta resolved{{}, std::move(stats_), std::nullopt};
  if (feedback_changed_) resolved.feedback = std::move(feedback_);
  resolved.tokens.reserve(tokens_.size());
  for (auto& [hash, counts] : tokens_) resolved.tokens.emplace_back(hash, std::move(counts));
  std::sort(resolved.tokens.begin(), resolved.tokens.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return resolved;
}

}  // namespace nbspamd::storage
