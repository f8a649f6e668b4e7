// Autolearner: guarded autolearn. The daemon learns a message by itself when its own verdict is
// confident enough, as SpamAssassin's and rspamd's autolearn do, with guards against learning its
// own mistakes and against a model that drifts to one class:
//
//   Autolearner autolearner(options, writer);
//   autolearner.Consider({.id = outcome.id, .spam_confidence = outcome.spam_confidence,
//                         .verdict = outcome.result.verdict}, *stats, bag.entries);
//
// A message is learned as spam when its calibrated spam_confidence is at least
// options.spam_confidence and the verdict is spam, as ham when it is at most
// options.ham_confidence and the verdict is ham (ConfidentClass). The learn goes through the
// ledger under the message's id, with source model::kAutolearnSource, so it is idempotent, never
// changes a record someone else gave (model::PlanLearn: a label given by a person or a front end
// always wins, and a later one takes the record over), can be listed and rolled back as one source
// (/admin/learned, /admin/rollback?source=autolearn), and calibrates nothing
// (model::FeedbackCellOf).
//
// The balance guard: a class is not autolearned while it has more than
// options.max_class_ratio times the other class's documents (BalanceAllows), read from the
// published model stats (the learns still queued are not in them, so the guard may be passed by
// at most options.queue_limit messages).
//
// Classify never waits for it: Consider only queues the learn with the training writer, and drops
// it (counted) when options.queue_limit autolearns are queued already.
//
// Its options change live (SetOptions, a reload of the settings): off, it considers nothing.
#ifndef NBSPAMD_CORE_AUTOLEARN_H_
#define NBSPAMD_CORE_AUTOLEARN_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "common/token_bag.h"
#include "core/training_writer.h"
#include "model/model_stats.h"
#include "model/verdict.h"

namespace nbspamd::core {

// The settings autolearn, autolearn_spam_confidence, autolearn_ham_confidence,
// autolearn_max_class_ratio and autolearn_queue_limit (config/settings.h).
struct AutolearnOptions {
  bool enabled = false;
  double spam_confidence = 0.99;   // Learned as spam at a spam_confidence at least this.
  double ham_confidence = 0.01;    // Learned as ham at a spam_confidence at most this.
  double max_class_ratio = 3.0;    // A class with more than this × the other's documents: no.
  std::size_t queue_limit = 1000;  // Autolearns queued with the writer beyond which: dropped.
};

// What Consider looks at of a classification.
struct AutolearnCandidate {
  std::string_view id;  // The message's key, as a train of the message would use it.
  std::optional<double> spam_confidence;
  model::Verdict verdict = model::Verdict::kUnsure;
  // The scan of the history this classification is ("": none), for the learned hook.
  std::string_view scan_id = {};
};

// Why a confident message was not learned.
enum class AutolearnSkip : std::uint8_t {
  kBalance = 0,         // The balance guard: its class is too far ahead.
  kAlreadyLearned = 1,  // The ledger holds its id (someone's label, or an earlier autolearn).
  kQueueFull = 2,       // options.queue_limit autolearns were queued already.
  kFailed = 3,          // The write failed (the store not writable, shutting down).
  kChecked = 4,         // Error-driven training: right beyond the margin, recorded, not counted.
};
inline constexpr std::size_t kAutolearnSkipCount = 5;
// Lower-case name of a reason ("balance", "already_learned", "queue_full", "failed", "checked").
[[nodiscard]] std::string_view AutolearnSkipName(AutolearnSkip skip);

// The autolearner's counters since start, for /metrics.
struct AutolearnFigures {
  bool enabled = false;
  std::uint64_t learned_spam = 0;
  std::uint64_t learned_ham = 0;
  std::array<std::uint64_t, kAutolearnSkipCount> skipped{};  // By AutolearnSkip.
};

// "spam" or "ham" when `candidate` is confident enough to be learned as that class; nullopt
// when not (no spam_confidence, below the thresholds, or a verdict that does not agree).
[[nodiscard]] std::optional<std::string_view> ConfidentClass(const AutolearnOptions& options,
                                                             const AutolearnCandidate& candidate);

// Whether the balance guard lets one more message of `label` ("spam" or "ham") in: its class
// would then hold at most options.max_class_ratio × the other class's documents.
[[nodiscard]] bool BalanceAllows(const AutolearnOptions& options, std::string_view label,
                                 const model::ModelStats& stats);

// Thread safety: Consider, Figures and options from any thread, with no lock (atomics only);
// SetOptions from any thread (a lock among setters only). The writer must outlive the
// Autolearner's last completion (SpamFilter stops the writer first).
class Autolearner {
 public:
  // REQUIRES: options' ham_confidence < spam_confidence, max_class_ratio >= 1 (as SetOptions).
  // `clock` stamps each learn (Unix seconds), as SpamFilterOptions::clock.
  Autolearner(AutolearnOptions options, TrainingWriter& writer,
              std::function<std::int64_t()> clock);
  Autolearner(const Autolearner&) = delete;
  Autolearner& operator=(const Autolearner&) = delete;

  // Queues the learn of `bag` as the candidate's confident class, unless a guard says no (then
  // counted). Never blocks: the outcome is counted on the writer thread. `stats` is the model
  // the candidate was scored with.
  void Consider(const AutolearnCandidate& candidate, const model::ModelStats& stats,
                const std::vector<BagEntry>& bag);

  // New options from the next Consider on (a learn already queued completes as it was).
  // REQUIRES: ham_confidence < spam_confidence, max_class_ratio >= 1 (the settings check them).
  void SetOptions(AutolearnOptions options);
  // Called on the writer thread with a candidate's scan_id (when it has one) and class once its
  // learn is durable and counted as learned (the scan history notes it). REQUIRES: set before the
  // first Consider, at most once; it must not throw.
  using LearnedHook = std::function<void(std::string_view scan_id, std::string_view label)>;
  void SetLearnedHook(LearnedHook hook) { learned_hook_ = std::move(hook); }

  [[nodiscard]] AutolearnFigures Figures() const;
  [[nodiscard]] AutolearnOptions options() const {
    return *options_.load(std::memory_order_acquire);
  }

 private:
  void Skip(AutolearnSkip skip) {
    skipped_[static_cast<std::size_t>(skip)].fetch_add(1, std::memory_order_relaxed);
  }

  // The options in force: every version set stays (a reload is rare), so a Consider that loaded
  // one may read it to its end without a lock.
  std::atomic<const AutolearnOptions*> options_{nullptr};
  std::mutex versions_mutex_;
  std::vector<std::unique_ptr<const AutolearnOptions>> versions_;
  TrainingWriter& writer_;
  std::function<std::int64_t()> clock_;
  LearnedHook learned_hook_;
  std::atomic<std::size_t> queued_ = 0;
  std::atomic<std::uint64_t> learned_spam_ = 0;
  std::atomic<std::uint64_t> learned_ham_ = 0;
  std::array<std::atomic<std::uint64_t>, kAutolearnSkipCount> skipped_{};
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_AUTOLEARN_H_
