// Calibration: spam_confidence, a calibrated P(spam | score), learned from the model's own
// feedback. No I/O.
//
// `probability` (the naive Bayes posterior) saturates at 0 or 1 for any long message, whatever
// the evidence is worth. The score ranks messages well, but is no probability. The model's own
// training history says what a score is worth: every message learned is first scored by the
// model as it was just before (a held-out score, LedgerEntry::held_out), and its label says
// whether it was spam. Those (score, label) pairs, counted in a histogram over fixed score bins,
// are fitted by Platt scaling into P(spam | score) = 1 / (1 + exp(-(a·score + b))), a >= 0:
//
//   FeedbackHistogram histogram;  // of the newest ledger records (core/recent_feedback.h)
//   histogram.Add(*FeedbackCellOf(entry), +1);         // each learned record that has a score
//   Calibration calibration(histogram);                // fits; immutable afterwards
//   std::optional<double> p = calibration.SpamConfidence(score);  // nullopt until ready()
//
// The fit, for bins b with s_b spam and h_b ham scores, S and H the totals:
//   1. Platt's targets instead of 1 and 0: a spam counts as t1 = (S + 1) / (S + 2), a ham as
//      t0 = 1 / (H + 2), so that separable feedback still has a finite fit;
//   2. a and b of maximum likelihood, each bin's scores at its index, by Newton's method with a
//      backtracking line search (Lin, Lin and Weng, "A note on Platt's probabilistic outputs");
//      with a single non-empty bin, a = 0;
//   3. if the best a is negative, a = 0 (the best never-decreasing fit, the loss being convex);
//      with a = 0, b is the log-odds of the mean target;
//   4. each bin's value at its index.
// Why a logistic curve and not a free-form one: the score is a mean of log-likelihood ratios, and
// the naive Bayes log-odds is linear in their sum, so the log-odds of spam is close to linear in
// the score; two parameters fitted on every held-out score need no bin to hold many. The
// isotonic regression used before (docs/ACCURACY.md) had to pool the sparse middle bins with
// their neighbours, which left the middle of the curve off by up to 0.16 on the corpora.
// SpamConfidence interpolates linearly between bin centres, so it is continuous, never
// decreasing in the score, and strictly between 0 and 1. Below kMinFeedbackPerClass held-out
// scores of either class it is nullopt: too little feedback to say anything.
//
// Thread safety: a Calibration is immutable once built; any number of threads may read one.
#ifndef NBSPAMD_MODEL_CALIBRATION_H_
#define NBSPAMD_MODEL_CALIBRATION_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/delta.h"

namespace nbspamd::model {

// The score binning and the definition of the score, in one place. Held-out scores outside
// [kCalibrationLow, kCalibrationHigh) are counted in the first or last bin. The range covers
// where P(spam | score) moves with today's score (ClassifyResult::score: the mean weight of the
// tokens far from neutral; with the defaults, held-out spam and ham overlap within about
// [-1.5, 1.2] on every corpus of docs/ACCURACY.md, and the thresholds are -0.6 and 1). Changing
// any of these is safe: a stored histogram of another layout is rebuilt from the ledger when the
// daemon opens the model.
inline constexpr double kCalibrationLow = -2.0;
inline constexpr double kCalibrationHigh = 2.0;
inline constexpr std::uint32_t kCalibrationBins = 100;
// The definition of ClassifyResult::score that held-out scores are recorded with. Bump it with
// any change to how the score is computed (or scaled): scores recorded before then are of
// another scale, so they stop counting, and the calibration starts again from new feedback.
//   1: held-out scores were computed with score_min_weight 0 (the mean of every weight) while
//      /classify's score used the daemon's score_min_weight (1 by default): the calibration was
//      fitted on another scale than the one it was applied to, too low in the middle.
//   2: held-out scores are computed with /classify's alpha and score_min_weight
//      (core::HeldOutScoring).
//   3: the score mixes the mean weight of the words and that of their character n-grams
//      (char_ngram_share, 0.3 by default since this scale; 2 was the words' mean alone): a
//      narrower score, on which scale 2's feedback would fit the curve too steep.
// A changed alpha, score_min_weight, char_ngrams or char_ngram_share setting is not told apart:
// the scores recorded before the change keep counting.
inline constexpr std::uint32_t kScoreScale = 3;
// spam_confidence is given once the histogram holds at least this many held-out scores of spam
// and this many of ham.
inline constexpr std::uint64_t kMinFeedbackPerClass = 20;

// What a histogram's counts mean: the score definition and the binning they were made with.
struct CalibrationLayout {
  std::uint32_t score_scale = kScoreScale;
  std::uint32_t bins = kCalibrationBins;
  double low = kCalibrationLow;
  double high = kCalibrationHigh;

  friend bool operator==(const CalibrationLayout&, const CalibrationLayout&) = default;
};

// The bin of the current layout that `score` falls in; scores outside the range (or NaN) go to
// the nearest end.
[[nodiscard]] std::uint32_t CalibrationBin(double score);

// Where a held-out score is counted.
struct FeedbackCell {
  std::uint32_t bin = 0;
  bool spam = false;

  friend bool operator==(const FeedbackCell&, const FeedbackCell&) = default;
};

// The cell a ledger record counts in: its held-out score's bin and whether it was learned as
// spam; nullopt when it counts nowhere (no held-out score, a score of another kScoreScale or not
// finite, a label other than spam and ham, or a record learned through kAutolearnSource).
[[nodiscard]] std::optional<FeedbackCell> FeedbackCellOf(const LedgerEntry& entry);

// The held-out scores counted by bin and true class, in the current layout unless decoded from
// elsewhere. Plain data.
struct FeedbackHistogram {
  CalibrationLayout layout;
  std::vector<std::uint64_t> spam = std::vector<std::uint64_t>(kCalibrationBins, 0);
  std::vector<std::uint64_t> ham = std::vector<std::uint64_t>(kCalibrationBins, 0);

  [[nodiscard]] std::uint64_t SpamTotal() const;
  [[nodiscard]] std::uint64_t HamTotal() const;
  // Counts one more record in `cell`. REQUIRES: cell.bin < layout.bins.
  void Add(const FeedbackCell& cell) { ++(cell.spam ? spam : ham)[cell.bin]; }

  friend bool operator==(const FeedbackHistogram&, const FeedbackHistogram&) = default;
};

// Steps 1 to 4 above for any number of bins (bin b at x = b): the fitted P(spam) of each bin.
// With no counts at all, every bin is 0.5. REQUIRES: spam.size() == ham.size().
[[nodiscard]] std::vector<double> FitCalibration(std::span<const std::uint64_t> spam,
                                                 std::span<const std::uint64_t> ham);

class Calibration {
 public:
  // Fits `histogram`. REQUIRES: histogram.layout is the current layout (CalibrationLayout{}).
  explicit Calibration(FeedbackHistogram histogram = {});

  [[nodiscard]] const FeedbackHistogram& histogram() const { return histogram_; }
  // Enough feedback: at least kMinFeedbackPerClass held-out scores of each class.
  [[nodiscard]] bool ready() const { return ready_; }
  // The fitted P(spam) at each bin's centre.
  [[nodiscard]] const std::vector<double>& fitted() const { return fitted_; }

  // P(spam | score), calibrated; nullopt while not ready() or for a score that is not finite.
  [[nodiscard]] std::optional<double> SpamConfidence(double score) const;

 private:
  FeedbackHistogram histogram_;
  std::vector<double> fitted_;
  bool ready_ = false;
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_CALIBRATION_H_
