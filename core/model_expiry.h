// ModelExpirySweep: keeps a model that runs for years bounded (docs/STORAGE.md "Ledger
// retention" and "Token expiry"; the settings ledger_retention_days, token_expiry_days,
// token_expiry_max_count, token_keep_weight and token_cap, docs/CONFIG.md). Every `interval` one
// pass, on the filter's clock:
//   1. the ledger retention retires the ledger records learned more than `ledger_retention` ago
//      into the base counts, the global ledger's and then each user's own
//      (SpamFilter::RetireLedgerAsync);
//   2. the token expiry drops the tokens no live record holds that were last seen more than
//      `token_age` ago, count at most `token_max_count` and weigh less than `keep_weight`: from
//      the global model, and then by the same rule from each user's layer, where only the user's
//      own records and counts play a part (SpamFilter::ExpireUserTokensAsync);
//   3. over `token_cap` distinct tokens, the cap drops the least recently seen of the tokens no
//      live record holds and that weigh less than `keep_weight`, whatever their count, a day at a
//      time, until |V| is at most the cap. When live records hold too many tokens for that, the
//      pass says so (ExpiryPass::cap_met, /metrics) and a shorter retention is the remedy. The cap
//      is the global model's only: it drops nothing from a user's layer.
// Every step goes through the training writer, so training goes on between steps, and the
// model stays exact: a forget of a live record finds every count it added.
//
//   ModelExpirySweep sweep(filter, policy, std::chrono::hours(1));
//
// Thread safety: owns one thread (a PeriodicTask), stopped by the destructor after the pass
// under way. The filter must outlive the sweep.
#ifndef NBSPAMD_CORE_MODEL_EXPIRY_H_
#define NBSPAMD_CORE_MODEL_EXPIRY_H_

#include <chrono>
#include <cstdint>
#include <expected>

#include "common/error.h"
#include "core/periodic_task.h"
#include "core/spam_filter.h"

namespace nbspamd::core {

// What a pass does; a zero turns its part off.
struct ExpiryPolicy {
  std::chrono::seconds ledger_retention{0};  // 0: records are never retired.
  std::chrono::seconds token_age{0};         // 0: no token expires by age.
  std::uint64_t token_max_count = 1;         // The age rule's "rare": at most this count.
  double keep_weight = 0;                    // Tokens weighing this much are kept; 0: none.
  bool keep_ham = false;                     // Tokens counted in ham at all are kept.
  std::uint64_t token_cap = 0;               // 0: no cap.
  double alpha = 1.0;                        // The weight's smoothing: the daemon's alpha.

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
};

class ModelExpirySweep {
 public:
  // REQUIRES: policy.enabled(), interval > 0. The first pass comes one `interval` after
  // construction.
  ModelExpirySweep(SpamFilter& filter, ExpiryPolicy policy, std::chrono::milliseconds interval);

  // One pass now, on the calling thread; reported to the filter (SpamFilter::NoteExpiryPass).
  // Errors: the first failure of a step (what the steps before it did stays done).
  [[nodiscard]] std::expected<ExpiryPass, Error> SweepOnce();

 private:
  [[nodiscard]] std::expected<ExpiryPass, Error> Pass(std::int64_t now);

  SpamFilter& filter_;
  const ExpiryPolicy policy_;
  PeriodicTask task_;  // Last: starts once the rest is built.
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_MODEL_EXPIRY_H_
