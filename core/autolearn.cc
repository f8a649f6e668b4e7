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
    : options_(options), writer_(writer), clock_(std::move(clock)) {
  assert(options_.enabled);
  assert(options_.ham_confidence < options_.spam_confidence);
  assert(options_.max_class_ratio >= 1);
}

void Autolearner::Consider(const AutolearnCandidate& candidate, const model::ModelStats& stats,
                           const std::vector<BagEntry>& bag) {
  const std::optional<std::string_view> label = ConfidentClass(options_, candidate);
  if (!label) return;
  if (!BalanceAllows(options_, *label, stats)) return Skip(AutolearnSkip::kBalance);
  // A slot in the queue first, so that no more than queue_limit are ever queued.
  if (queued_.fetch_add(1, std::memory_order_relaxed) >= options_.queue_limit) {
    queued_.fetch_sub(1, std::memory_order_relaxed);
    return Skip(AutolearnSkip::kQueueFull);
  }
  const bool spam = *label == "spam";
  LearnRequest request{std::string(candidate.id), std::string(*label), TokenBag{bag, {}},
                       model::LearnOrigin{std::string(model::kAutolearnSource), clock_()}};
  writer_.Learn(std::move(request), [this, spam](std::expected<model::LearnStatus, Error> learned) {
    queued_.fetch_sub(1, std::memory_order_relaxed);
    if (!learned) return Skip(AutolearnSkip::kFailed);
    if (*learned == model::LearnStatus::kChecked) return Skip(AutolearnSkip::kChecked);
    if (*learned != model::LearnStatus::kLearned) return Skip(AutolearnSkip::kAlreadyLearned);
    (spam ? learned_spam_ : learned_ham_).fetch_add(1, std::memory_order_relaxed);
  });
}

AutolearnFigures Autolearner::Figures() const {
  AutolearnFigures figures;
  figures.enabled = true;
  figures.learned_spam = learned_spam_.load(std::memory_order_relaxed);
  figures.learned_ham = learned_ham_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kAutolearnSkipCount; ++i) {
    figures.skipped[i] = skipped_[i].load(std::memory_order_relaxed);
  }
  return figures;
}

}  // namespace nbspamd::core
