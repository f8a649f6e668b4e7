#include "model/learning.h"

#include <cassert>
#include <cstdint>
#include <vector>

#include "model/calibration.h"

namespace nbspamd::model {
namespace {

// Adds `sign` × the record's counts in class `class_index` to `delta`.
void AddRecord(const LedgerEntry& record, std::uint32_t class_index, std::int64_t sign,
               Delta& delta) {
  for (const BagEntry& token : record.tokens) {
    delta.token_changes.push_back({token.hash, class_index, sign * std::int64_t{token.count}});
  }
  delta.document_changes.push_back({class_index, sign});
}

// Adds `sign` × the record's calibration cell, if it has one, to `delta`.
void AddFeedback(const LedgerEntry& record, std::int64_t sign, Delta& delta) {
  if (const auto cell = FeedbackCellOf(record)) {
    delta.feedback_changes.push_back({cell->bin, cell->spam, sign});
  }
}

// The class index of `label` in `stats`, appending it to delta.new_classes when it is new.
std::uint32_t ClassIndex(std::string_view label, const ModelStats& stats, Delta& delta) {
  if (const auto index = stats.FindClass(label)) return static_cast<std::uint32_t>(*index);
  delta.new_classes.emplace_back(label);
  return static_cast<std::uint32_t>(stats.classes.size() + delta.new_classes.size() - 1);
}

}  // namespace

std::string_view LearnStatusName(LearnStatus status) {
  switch (status) {
    case LearnStatus::kLearned:
      return "learned";
    case LearnStatus::kRelearned:
      return "relearned";
    case LearnStatus::kUnchanged:
      return "unchanged";
    case LearnStatus::kChecked:
      return "checked";
  }
  return "unchanged";
}

LearnPlan PlanLearn(std::string_view id, std::string_view label, const TokenBag& bag,
                    const std::optional<LedgerEntry>& learned, const ModelStats& stats,
                    LearnOrigin origin, std::optional<HeldOutScore> held_out, bool count) {
  assert(!label.empty());
  LearnPlan plan;
  const bool autolearn = origin.source == kAutolearnSource;
  if (learned && autolearn) return plan;  // kUnchanged: autolearn never changes a record.
  const bool takes_over = learned && learned->origin.source == kAutolearnSource;
  const bool same_label = learned && learned->label == label;
  // A record only checked before, now counted (a correction of the same label cannot be one).
  const bool counts_checked = same_label && learned->checked && count;
  if (same_label && !takes_over && !counts_checked) return plan;  // kUnchanged.

  Delta& delta = plan.delta;
  std::vector<BagEntry> old_tokens;  // What the record counted, to take back.
  std::optional<std::uint32_t> old_class;
  if (learned) {
    if (!learned->checked) {
      const auto index = stats.FindClass(learned->label);
      assert(index.has_value());
      old_class = static_cast<std::uint32_t>(*index);
      old_tokens = learned->tokens;
    }
    AddFeedback(*learned, -1, delta);
    delta.replaced_origin = learned->origin;
    held_out = learned->held_out;  // Held out at its first learn; the label is what changes.
  }
  LedgerEntry record{std::string(label), count ? bag.entries : std::vector<BagEntry>{},
                     std::move(origin), held_out};
  record.checked = !count;
  const std::optional<std::uint32_t> new_class =
      count ? std::optional(ClassIndex(label, stats, delta)) : std::nullopt;
  if (old_class && new_class && *old_class == *new_class) {
    // The same class: one change per token, so storage sees each token once, and no document.
    auto old_token = old_tokens.begin();
    auto new_token = record.tokens.begin();
    while (old_token != old_tokens.end() || new_token != record.tokens.end()) {
      std::int64_t change = 0;
      TokenHash hash = 0;
      if (new_token == record.tokens.end() ||
          (old_token != old_tokens.end() && old_token->hash < new_token->hash)) {
        hash = old_token->hash;
        change = -std::int64_t{old_token->count};
        ++old_token;
      } else if (old_token == old_tokens.end() || new_token->hash < old_token->hash) {
        hash = new_token->hash;
        change = std::int64_t{new_token->count};
        ++new_token;
      } else {
        hash = new_token->hash;
        change = std::int64_t{new_token->count} - std::int64_t{old_token->count};
        ++old_token;
        ++new_token;
      }
      if (change != 0) delta.token_changes.push_back({hash, *new_class, change});
    }
  } else {
    if (old_class) {
      const LedgerEntry old_record{learned->label, std::move(old_tokens), {}, std::nullopt};
      AddRecord(old_record, *old_class, -1, delta);
    }
    if (new_class) AddRecord(record, *new_class, +1, delta);
  }
  AddFeedback(record, +1, delta);
  delta.ledger_id = std::string(id);
  delta.ledger_entry = std::move(record);
  if (!count) {
    plan.status = LearnStatus::kChecked;
  } else {
    plan.status = learned && !counts_checked ? LearnStatus::kRelearned : LearnStatus::kLearned;
  }
  return plan;
}

Delta PlanForget(std::string_view id, const LedgerEntry& learned, const ModelStats& stats) {
  Delta delta;
  if (!learned.checked) {  // A checked record counted nothing.
    const auto class_index = stats.FindClass(learned.label);
    assert(class_index.has_value());
    AddRecord(learned, static_cast<std::uint32_t>(*class_index), -1, delta);
  }
  AddFeedback(learned, -1, delta);
  delta.ledger_id = std::string(id);
  delta.replaced_origin = learned.origin;
  return delta;
}

}  // namespace nbspamd::model
