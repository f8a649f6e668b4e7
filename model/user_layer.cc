#include "model/user_layer.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>

namespace nbspamd::model {
namespace {

// Adds `sign` × the record's counts in class `class_index` to the user change.
void AddRecord(const LedgerEntry& record, std::uint32_t class_index, std::int64_t sign,
               UserLayerChange& change) {
  for (const BagEntry& token : record.tokens) {
    change.token_changes.push_back({token.hash, class_index, sign * std::int64_t{token.count}});
  }
  change.document_changes.push_back({class_index, sign});
}

// The global class index of `label`: a class of `stats`, one `delta` creates, or a new one
// appended to delta.new_classes.
std::uint32_t GlobalClassIndex(std::string_view label, const ModelStats& stats, Delta& delta) {
  if (const auto index = stats.FindClass(label)) return static_cast<std::uint32_t>(*index);
  const auto created = std::find(delta.new_classes.begin(), delta.new_classes.end(), label);
  if (created == delta.new_classes.end()) delta.new_classes.emplace_back(label);
  const auto position = std::find(delta.new_classes.begin(), delta.new_classes.end(), label);
  return static_cast<std::uint32_t>(stats.classes.size() + (position - delta.new_classes.begin()));
}

}  // namespace

std::expected<void, Error> CheckUserId(std::string_view user) {
  if (user.empty()) return MakeError(ErrorCode::kInvalidArgument, "a user id must not be empty");
  if (user.size() > kMaxUserIdBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a user id must be at most " + std::to_string(kMaxUserIdBytes) + " bytes");
  }
  if (user.find('\0') != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "a user id must not contain a 0 byte");
  }
  return {};
}

LearnStatus AddUserLearn(Delta& delta, std::string_view user, std::string_view id,
                         std::string_view label, const TokenBag& bag,
                         const std::optional<LedgerEntry>& learned, const ModelStats& stats,
                         LearnOrigin origin) {
  assert(!label.empty());
  assert(!delta.user.has_value());
  if (learned && learned->label == label) return LearnStatus::kUnchanged;
  UserLayerChange change;
  change.user = std::string(user);
  if (learned) {
    const auto old_class = stats.FindClass(learned->label);
    assert(old_class.has_value());
    AddRecord(*learned, static_cast<std::uint32_t>(*old_class), -1, change);
    change.replaced_origin = learned->origin;
  }
  LedgerEntry record{std::string(label), bag.entries, std::move(origin), std::nullopt};
  AddRecord(record, GlobalClassIndex(label, stats, delta), +1, change);
  change.ledger_id = std::string(id);
  change.ledger_entry = std::move(record);
  delta.user = std::move(change);
  return learned ? LearnStatus::kRelearned : LearnStatus::kLearned;
}

void AddUserForget(Delta& delta, std::string_view user, std::string_view id,
                   const LedgerEntry& learned, const ModelStats& stats) {
  assert(!delta.user.has_value());
  const auto class_index = stats.FindClass(learned.label);
  assert(class_index.has_value());
  UserLayerChange change;
  change.user = std::string(user);
  AddRecord(learned, static_cast<std::uint32_t>(*class_index), -1, change);
  change.ledger_id = std::string(id);
  change.replaced_origin = learned.origin;
  delta.user = std::move(change);
}

ModelStats AlignLayerStats(const ModelStats& layer, const ModelStats& global) {
  ModelStats aligned;
  aligned.classes.reserve(global.classes.size());
  for (std::size_t c = 0; c < global.classes.size(); ++c) {
    ClassStats stats{global.classes[c].label, 0, 0};
    if (c < layer.classes.size()) {
      stats.documents = layer.classes[c].documents;
      stats.tokens = layer.classes[c].tokens;
    }
    aligned.classes.push_back(std::move(stats));
  }
  aligned.vocabulary_size = layer.vocabulary_size;
  return aligned;
}

Snapshot EmptyLayerSnapshot(const ModelStats& global, std::size_t entries) {
  auto stats = std::make_shared<const ModelStats>(AlignLayerStats({}, global));
  return Snapshot{stats, std::vector<std::uint64_t>(entries * global.classes.size(), 0)};
}

}  // namespace nbspamd::model
