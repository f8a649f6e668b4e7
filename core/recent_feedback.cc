#include "core/recent_feedback.h"

#include <cmath>
#include <utility>
#include <vector>

#include "model/calibration.h"

namespace nbspamd::core {

RecentFeedback::RecentFeedback(model::VerdictThresholds configured)
    : configured_(configured),
      current_(std::make_shared<const model::FeedbackThresholds>(
          model::ThresholdsFromFeedback({}, {}, configured))),
      held_out_(std::make_shared<const model::HeldOutWindow>()),
      calibration_(std::make_shared<const model::Calibration>()) {}

std::optional<RecentFeedback::Record> RecentFeedback::RecordOf(
    std::string_view id, std::string_view label, const model::LearnOrigin& origin,
    const std::optional<model::HeldOutScore>& held_out) {
  if (origin.source == model::kAutolearnSource) return std::nullopt;
  Record record{.learned_at = origin.learned_at,
                .id = std::string(id),
                .spam = label == "spam",
                .score = std::nullopt};
  if ((label == "spam" || label == "ham") && held_out && held_out->scale == model::kScoreScale &&
      std::isfinite(held_out->score)) {
    record.score = held_out->score;
  }
  return record;
}

std::expected<void, Error> RecentFeedback::Load(const storage::Store& store) {
  records_.clear();
  scored_[0].clear();
  scored_[1].clear();
  learned_at_.clear();
  histogram_ = {};
  auto newest = store.NewestLearned(kHorizon);
  stale_ = !newest.has_value();
  if (newest) {
    for (const storage::LearnedRecord& learned : *newest) {
      if (auto record = RecordOf(learned.id, learned.label, learned.origin, learned.held_out)) {
        Insert(std::move(*record));
      }
    }
  }
  Publish();
  if (!newest) return std::unexpected(std::move(newest.error()));
  return {};
}

bool RecentFeedback::Remove(const std::string& id) {
  const auto at = learned_at_.find(id);
  if (at == learned_at_.end()) return false;
  const auto record = records_.find(
      Record{.learned_at = at->second, .id = id, .spam = false, .score = std::nullopt});
  if (record != records_.end()) Erase(record);
  return true;
}

void RecentFeedback::Erase(std::set<Record>::iterator record) {
  if (record->score) {
    scored_[record->spam ? 1 : 0].erase(*record);
    --(record->spam ? histogram_.spam : histogram_.ham)[model::CalibrationBin(*record->score)];
  }
  learned_at_.erase(record->id);
  records_.erase(record);
}

void RecentFeedback::Insert(Record record) {
  if (records_.size() >= kHorizon && record < *records_.begin()) return;  // Older than all held.
  learned_at_[record.id] = record.learned_at;
  if (record.score) {
    scored_[record.spam ? 1 : 0].insert(record);
    histogram_.Add({.bin = model::CalibrationBin(*record.score), .spam = record.spam});
  }
  records_.insert(std::move(record));
  if (records_.size() > kHorizon) Erase(records_.begin());
}

std::expected<void, Error> RecentFeedback::Applied(const storage::Store& store,
                                                   std::span<const model::Delta> deltas,
                                                   const storage::BatchResults& results) {
  if (stale_) return Load(store);
  bool changed = false;
  for (std::size_t i = 0; i < deltas.size() && i < results.size(); ++i) {
    const model::Delta& delta = deltas[i];
    if (!results[i] || delta.ledger_id.empty()) continue;
    // A record held goes; with kHorizon held, an older one of the ledger may now belong in.
    const bool full = records_.size() >= kHorizon;
    if (Remove(delta.ledger_id)) {
      changed = true;
      if (full) stale_ = true;
    }
    if (!delta.ledger_entry) continue;
    const model::LedgerEntry& entry = *delta.ledger_entry;
    if (auto record = RecordOf(delta.ledger_id, entry.label, entry.origin, entry.held_out)) {
      Insert(std::move(*record));
      changed = true;
    }
  }
  if (stale_) return Load(store);
  if (changed) Publish();
  return {};
}

void RecentFeedback::Publish() {
  std::vector<double> hams, spams;
  hams.reserve(model::kFeedbackWindow);
  spams.reserve(model::kFeedbackWindow);
  for (int spam = 0; spam < 2; ++spam) {
    std::vector<double>& window = spam != 0 ? spams : hams;
    for (auto it = scored_[spam].rbegin();
         it != scored_[spam].rend() && window.size() < model::kFeedbackWindow; ++it) {
      window.push_back(*it->score);
    }
  }
  current_.store(std::make_shared<const model::FeedbackThresholds>(
      model::ThresholdsFromFeedback(hams, spams, configured_)));
  // The same scores, unsorted, for what a threshold pair would do (model/threshold_outcomes.h):
  // moved, not copied, so the writer pays one allocation.
  held_out_.store(std::make_shared<const model::HeldOutWindow>(
      model::HeldOutWindow{.hams = std::move(hams), .spams = std::move(spams)}));
  calibration_.store(std::make_shared<const model::Calibration>(histogram_));
}

}  // namespace nbspamd::core
