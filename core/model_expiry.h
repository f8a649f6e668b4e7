// ModelExpirySweep: keeps a model that runs for years bounded (docs/STORAGE.md "Ledger
// retention" and "Token expiry"; the settings ledger_retention_days, token_expiry_days,
// token_expiry_max_count, token_keep_weight and token_cap, docs/CONFIG.md). Every `interval` one
// pass, on the filter's clock:
//   1. the ledger retention retires the ledger records learned more than `ledger_retention` ago
//      into the base counts, the global ledger's and then each user's own
//      (ModelUpkeep::RetireLedgerAsync);
//   2. the token expiry drops the tokens no live record holds that were last seen more than
//      `token_age` ago, count at most `token_max_count` and weigh less than `keep_weight`: from
//      the global model, and then by the same rule from each user's layer, where only the user's
//      own records and counts play a part (ModelUpkeep::ExpireUserTokensAsync). With
//      `token_min_messages`, "ago" is also counted in messages: a token goes only if the model
//      has gained at least that many documents since it was last seen, as the sweep's own
//      samples of the document count (one a pass, kept in memory; the first pass also takes one
//      from the live ledger: when its newest `token_min_messages` records were learned) show.
//      Until its samples span that many, the age rule waits (ExpiryPass::age_rule_waiting):
//      after a start whose live ledger holds fewer, and for ever at a site that learns fewer;
//   3. over `token_cap` distinct tokens, the cap drops the least recently seen of the tokens no
//      live record holds and that weigh less than `keep_weight`, whatever their count, a day at a
//      time, until |V| is at most the cap. When live records hold too many tokens for that, the
//      pass says so (ExpiryPass::cap_met, /metrics) and a shorter retention is the remedy. The cap
//      is the global model's only: it drops nothing from a user's layer.
// Every step goes through the training writer, so training goes on between steps, and the
// model stays exact: a forget of a live record finds every count it added. Each pass then
// flushes the store's memory tables (Store::FlushMemoryTables), so that the write-ahead logs
// holding the expiry's writes (its own, or in cluster mode another daemon's pass applied from
// the stream) can go; a failed flush is logged, the pass still counts.
//
//   ModelExpirySweep sweep(filter, policy, std::chrono::hours(1));
//
// Thread safety: owns one thread (a PeriodicTask), stopped by the destructor after the pass
// under way; SweepOnce may be called from any thread, passes run one at a time. The filter must
// outlive the sweep.
#ifndef NBSPAMD_CORE_MODEL_EXPIRY_H_
#define NBSPAMD_CORE_MODEL_EXPIRY_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <expected>
#include <mutex>
#include <optional>

#include "common/error.h"
#include "core/periodic_task.h"
#include "core/spam_filter.h"

namespace nbspamd::core {

// What a pass does; a zero turns its part off.
struct ExpiryPolicy {
  std::chrono::seconds ledger_retention{0};  // 0: records are never retired.
  std::chrono::seconds token_age{0};         // 0: no token expires by age.
  std::uint64_t token_max_count = 1;         // The age rule's "rare": at most this count.
  // The age rule's "old" in messages too: at least this many documents learned since the token
  // was last seen; 0: days alone.
  std::uint64_t token_min_messages = 0;
  double keep_weight = 0;       // Tokens weighing this much are kept; 0: none.
  bool keep_ham = false;        // Tokens counted in ham at all are kept.
  std::uint64_t token_cap = 0;  // 0: no cap.
  double alpha = 1.0;           // The weight's smoothing: the daemon's alpha.

  [[nodiscard]] bool enabled() const {
    return ledger_retention.count() > 0 || token_age.count() > 0 || token_cap > 0;
  }
};

// What one pass did.
struct ExpiryPass {
  std::uint64_t retired = 0;             // Ledger records retired, global and users'.
  std::uint64_t dropped_by_age = 0;      // Tokens the age rule dropped from the global model.
  std::uint64_t dropped_from_users = 0;  // Tokens the age rule dropped from user layers.
  std::uint64_t dropped_by_cap = 0;      // Tokens the cap dropped.
  bool cap_met = true;                   // |V| is at most the cap (or there is none).
  // The age rule dropped nothing because fewer than token_min_messages documents have been
  // learned since the sweep's oldest sample.
  bool age_rule_waiting = false;
};

class ModelExpirySweep {
 public:
  // REQUIRES: policy.enabled(), interval > 0. The first pass comes one `interval` after
  // construction.
  ModelExpirySweep(SpamFilter& filter, ExpiryPolicy policy, std::chrono::milliseconds interval);

  // One pass now, on the calling thread; reported to the filter (ModelUpkeep::NoteExpiryPass).
  // Errors: the first failure of a step (what the steps before it did stays done).
  [[nodiscard]] std::expected<ExpiryPass, Error> SweepOnce();

 private:
  // The model's document count at a pass.
  struct DocumentSample {
    std::int64_t time;  // Unix seconds, the filter's clock.
    std::uint64_t documents;
  };

  [[nodiscard]] std::expected<ExpiryPass, Error> Pass(std::int64_t now);
  // Adds this pass's sample and returns the newest sample time with at least
  // token_min_messages documents learned since (dropping the samples older than it), or nullopt
  // while the samples span fewer.
  [[nodiscard]] std::optional<std::int64_t> MessageHorizon(std::int64_t now);

  SpamFilter& filter_;
  const ExpiryPolicy policy_;
  std::mutex pass_mutex_;               // Held by a pass; guards what follows.
  std::deque<DocumentSample> samples_;  // Oldest first; only with token_min_messages.
  bool seeded_ = false;                 // The first sample, from the live ledger, was taken.
  bool waiting_logged_ = false;         // The last pass's age rule waited (logged once).
  PeriodicTask task_;                   // Last: starts once the rest is built.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_MODEL_EXPIRY_H_
