#include "server/model_expiry_setup.h"

#include <chrono>

namespace nbspamd::server {

core::ExpiryPolicy ExpiryPolicyOf(const config::Settings& settings) {
  return {.ledger_retention = std::chrono::days(settings.ledger_retention_days),
          .token_age = std::chrono::days(settings.token_expiry_days),
          .token_max_count = settings.token_expiry_max_count,
          .token_min_messages = settings.token_expiry_min_messages,
          .keep_weight = settings.token_keep_weight,
          .keep_ham = settings.token_keep_ham,
          .token_cap = settings.token_cap,
          .alpha = settings.alpha};
}

}  // namespace nbspamd::server
