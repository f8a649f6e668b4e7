// SpamFilterOptions: how a SpamFilter (spam_filter.h) scores, decides and learns, as the settings
// give it (config/settings.h; server/main.cc fills it). A plain value.
#ifndef NBSPAMD_CORE_SPAM_FILTER_OPTIONS_H_
#define NBSPAMD_CORE_SPAM_FILTER_OPTIONS_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/autolearn.h"
#include "core/training_writer.h"
#include "model/classifier.h"
#include "model/layered.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::core {

// The wall clock that stamps each learn in the ledger (Unix seconds). A seam so that tests can
// replay training and compare ledgers without a second boundary in between.
using WallClock = std::function<std::int64_t()>;

// Unix time from std::chrono::system_clock.
std::int64_t SystemUnixSeconds();
std::int64_t SystemUnixMillis();

struct SpamFilterOptions {
  double alpha = 0.1;
  double spam_threshold = 1.0;  // See config::Settings::spam_threshold.
  // See config::Settings::ham_threshold. REQUIRES: ham_threshold <= spam_threshold.
  double ham_threshold = -0.6;
  // Whether the held-out scores of the mail fed back most recently narrow the thresholds above
  // (core/recent_feedback.h, model/feedback_thresholds.h; config::Settings::verdict_thresholds).
  // Off, they hold as set.
  bool thresholds_from_feedback = false;
  double score_min_weight = 1.0;  // See config::Settings::score_min_weight.
  model::ScoreForm score_form = model::ScoreForm::kMeanWeight;  // config::Settings::score_form.
  double char_ngram_share = 0.0;   // config::Settings::char_ngram_share.
  TrainingRegime training_regime;  // See config::Settings::train_margin.
  tokenizer::TokenizerOptions tokenizer;
  WallClock clock = SystemUnixSeconds;
  // How often a StoreWatch tries to bring writes back after a fault of the machine; 0: never
  // (then nothing resumes writes but a restart).
  std::chrono::milliseconds store_recovery_interval{1000};
  // User layers: β, the token pseudo-counts of the global prior, and γ, its document
  // pseudo-counts (model::LayerOptions; config::Settings::user_beta, user_gamma). REQUIRES: > 0.
  double user_beta = model::LayerOptions{}.beta;
  double user_gamma = model::LayerOptions{}.gamma;
  // Whether a train or forget with a user also trains the global model (setting
  // train_global_from_users). On, a user gets the pooled row of docs/ACCURACY.md "Per-user
  // layers" (the global model learns the user's feedback too, and the user's layer sits on it);
  // what it does to the other users, whose global prior then moves with this user's feedback, is
  // not measured. Off (the default), a user's feedback changes only that user's layer.
  bool train_global_from_users = false;
  // With train_global_from_users: only the feedback that comes through one of these sources
  // (token names, spamd TELL grants; "" is training without a token) trains the global model.
  // Empty: every source's.
  std::vector<std::string> train_global_sources;
  // Guarded autolearn (core/autolearn.h), off by default: a classify without a user whose
  // verdict is confident enough learns the message, through the ledger with source
  // model::kAutolearnSource. Not in cluster mode (EnableReplication refuses it).
  AutolearnOptions autolearn;

  // Whether a train, forget or rollback with a user, through `source`, changes the global model.
  [[nodiscard]] bool TrainsGlobal(std::string_view source) const {
    return train_global_from_users &&
           (train_global_sources.empty() ||
            std::ranges::find(train_global_sources, source) != train_global_sources.end());
  }
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_SPAM_FILTER_OPTIONS_H_
