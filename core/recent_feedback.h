// RecentFeedback: the held-out scores of the mail fed back most recently, the verdict
// thresholds they give (model/feedback_thresholds.h, docs/CONFIG.md `verdict_thresholds`), and
// the calibration of spam_confidence fitted on them (model/calibration.h).
//
//   RecentFeedback recent({.spam = 1.0, .ham = -0.6});
//   recent.Load(store);                           // once, before the writer writes
//   recent.Applied(store, deltas, results);       // after each ApplyBatch (the writer's thread)
//   model::VerdictThresholds t = recent.Current()->thresholds;  // any thread
//
// What it holds is a function of the global ledger alone: among the ledger's newest kHorizon
// records by (learned_at, id) (Store::NewestLearned: autolearn's left out), the held-out scores of
// the newest model::kFeedbackWindow hams and as many spams (records of the current score scale,
// with a finite score; checked records included: they were fed back); the calibration, the
// held-out scores of all the kHorizon records (spam and ham, as they came: the classes' shares are
// the mail's). A score's meaning drifts as the model grows: fitted on every held-out score since
// the first, the curve kept the young model's and was up to 0.145 too low in its middle on a
// stream of 30,000 (docs/ACCURACY.md, "spam_confidence on the mixed score"). So every daemon of a
// cluster, holding the same ledger, has the same thresholds after the same events, and a restart
// brings back those in force before it. Learns update it in memory; a forget or relearn of a
// record it holds, when it holds kHorizon of them, reads the store again (the next-newest record
// comes in).
//
// Errors: a store read that fails (Load, or the re-read after a forget) leaves it with no records
// and the configured thresholds until a later Applied reads the store successfully.
//
// Thread safety: Current from any thread, never waiting; Load and Applied from one thread at a
// time (the training writer's).
#ifndef NBSPAMD_CORE_RECENT_FEEDBACK_H_
#define NBSPAMD_CORE_RECENT_FEEDBACK_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

#include "common/error.h"
#include "model/calibration.h"
#include "model/delta.h"
#include "model/feedback_thresholds.h"
#include "model/threshold_outcomes.h"
#include "model/verdict.h"
#include "storage/store.h"

namespace nbspamd::core {

class RecentFeedback {
 public:
  // The newest ledger records looked at: enough to hold a window of each class while one class
  // is twenty times as frequent as the other in the feedback.
  static constexpr std::size_t kHorizon = 20 * model::kFeedbackWindow;

  // `configured`: the widest thresholds (the settings'). REQUIRES: configured.ham <= .spam.
  explicit RecentFeedback(model::VerdictThresholds configured);
  RecentFeedback(const RecentFeedback&) = delete;
  RecentFeedback& operator=(const RecentFeedback&) = delete;

  // Reads the newest records from `store` and publishes their thresholds. Errors: the store's.
  std::expected<void, Error> Load(const storage::Store& store);

  // Takes in the deltas of one ApplyBatch that were applied (results[i] holds a value).
  // Errors: the store's, when it had to be read again.
  std::expected<void, Error> Applied(const storage::Store& store,
                                     std::span<const model::Delta> deltas,
                                     const storage::BatchResults& results);

  // The thresholds the held-out scores give now; never null.
  [[nodiscard]] std::shared_ptr<const model::FeedbackThresholds> Current() const {
    return current_.load();
  }
  // The held-out scores Current() was computed from (the newest kFeedbackWindow hams and spams,
  // newest first), published with it; never null.
  [[nodiscard]] std::shared_ptr<const model::HeldOutWindow> HeldOut() const {
    return held_out_.load();
  }
  // spam_confidence's calibration: fitted on the held-out scores of the newest kHorizon records,
  // published with the thresholds; never null (not ready() below kMinFeedbackPerClass of a class).
  [[nodiscard]] std::shared_ptr<const model::Calibration> Calibration() const {
    return calibration_.load();
  }

 private:
  struct Record {
    std::int64_t learned_at = 0;
    std::string id;
    bool spam = false;
    std::optional<double> score;  // Counted in a window: a spam or ham label and a usable score.

    [[nodiscard]] bool operator<(const Record& other) const {
      return learned_at < other.learned_at || (learned_at == other.learned_at && id < other.id);
    }
  };
  static std::optional<Record> RecordOf(std::string_view id, std::string_view label,
                                        const model::LearnOrigin& origin,
                                        const std::optional<model::HeldOutScore>& held_out);
  // Removes the record of `id`, if held; whether it was.
  bool Remove(const std::string& id);
  void Insert(Record record);
  void Erase(std::set<Record>::iterator record);
  void Publish();

  const model::VerdictThresholds configured_;
  std::set<Record> records_;    // The newest, at most kHorizon.
  std::set<Record> scored_[2];  // Those of records_ with a score: hams [0], spams [1].
  std::unordered_map<std::string, std::int64_t> learned_at_;  // Of each id in records_.
  // The held-out scores of scored_ (all of records_ that have one) by bin and class.
  model::FeedbackHistogram histogram_;
  bool stale_ = false;  // records_ is not what the ledger says: read the store at the next change.
  std::atomic<std::shared_ptr<const model::FeedbackThresholds>> current_;
  std::atomic<std::shared_ptr<const model::HeldOutWindow>> held_out_;
  std::atomic<std::shared_ptr<const model::Calibration>> calibration_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_RECENT_FEEDBACK_H_
