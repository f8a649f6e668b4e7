#include "core/autolearn.h"

#include <cassert>
#include <string>
#include <utility>

#include "model/delta.h"

namespace nbspamd::core {

std::string_view AutolearnSkipName(AutolearnSkip skip) {
  switch (skip) {
    case AutolearnSkip::kBalance:
      return "balance";
    case AutolearnSkip::kAlreadyLearned:
      return "already_learned";
    case AutolearnSkip::kQueueFull:
      return "queue_full";
    case AutolearnSkip::kFailed:
      return "failed";
    case AutolearnSkip::kChecked:
      return "checked";
  }
  return "failed";
}

std::optional<std::string_view> ConfidentClass(const AutolearnOptions& options,
                                               const AutolearnCandidate& candidate) {
  if (!candidate.spam_confidence) return std::nullopt;
  const double confidence = *candidate.spam_confidence;
  if (confidence >= options.spam_confidence && candidate.verdict == model::Verdict::kSpam) {
    return "spam";
  }
  if (confidence <= options.ham_confidence && candidate.verdict == model::Verdict::kHam) {
    return "ham";
  }
  return std::nullopt;
}

bool BalanceAllows(const AutolearnOptions& options, std::string_view label,
                   const model::ModelStats& stats) {
  const std::string_view other = label == "spam" ? "ham" : "spam";
  const auto own_index = stats.FindClass(label);
  const auto other_index = stats.FindClass(other);
  const double own = own_index ? static_cast<double>(stats.classes[*own_index].documents) : 0;
  const double others =
      other_index ? static_cast<double>(stats.classes[*other_index].documents) : 0;
  return own + 1 <= options.max_class_ratio * others;
}

Autolearner::Autolearner(AutolearnOptions options, TrainingWriter& writer,
                         std::function<std::int64_t()> clock)
    : writer_(writer), clock_(std::move(clock)) {
  SetOptions(options);
}

void Autolearner::SetOptions(AutolearnOptions options) {
  assert(options.ham_confidence < options.spam_confidence);
  assert(options.max_class_ratio >= 1);
  auto version = std::make_unique<const AutolearnOptions>(options);
  std::lock_guard lock(versions_mutex_);
  options_.store(version.get(), std::memory_order_release);
  versions_.push_back(std::move(version));
}

void Autolearner::Consider(const AutolearnCandidate& candidate, const model::ModelStats& stats,
                           const std::vector<BagEntry>& bag) {
  const AutolearnOptions& options = *options_.load(std::memory_order_acquire);
  if (!options.enabled) return;
  const std::optional<std::string_view> label = ConfidentClass(options, candidate);
  if (!label) return;
  if (!BalanceAllows(options, *label, stats)) return Skip(AutolearnSkip::kBalance);
  // A slot in the queue first, so that no more than queue_limit are ever queued.
  if (queued_.fetch_add(1, std::memory_order_relaxed) >= options.queue_limit) {
    queued_.fetch_sub(1, std::memory_order_relaxed);
    return Skip(AutolearnSkip::kQueueFull);
  }
  const bool spam = *label == "spam";
  LearnRequest request{std::string(candidate.id), std::string(*label), TokenBag{bag, {}},
                       model::LearnOrigin{std::string(model::kAutolearnSource), clock_()}};
  writer_.Learn(std::move(request), [this, spam, scan_id = std::string(candidate.scan_id)](
                                        std::expected<model::LearnStatus, Error> learned) {
    queued_.fetch_sub(1, std::memory_order_relaxed);
    if (!learned) return Skip(AutolearnSkip::kFailed);
    if (*learned == model::LearnStatus::kChecked) return Skip(AutolearnSkip::kChecked);
    if (*learned != model::LearnStatus::kLearned) return Skip(AutolearnSkip::kAlreadyLearned);
    (spam ? learned_spam_ : learned_ham_).fetch_add(1, std::memory_order_relaxed);
    if (learned_hook_ && !scan_id.empty()) learned_hook_(scan_id, spam ? "spam" : "ham");
  });
}

AutolearnFigures Autolearner::Figures() const {
  AutolearnFigures figures;
  figures.enabled = options().enabled;
  figures.learned_spam = learned_spam_.load(std::memory_order_relaxed);
  figures.learned_ham = learned_ham_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kAutolearnSkipCount; ++i) {
    figures.skipped[i] = skipped_[i].load(std::memory_order_relaxed);
  }
  return figures;
}

}  // namespace nbspamd::core
