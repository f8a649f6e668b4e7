// The model expiry's policy (core/model_expiry.h) as the settings give it: the sweep in main.cc
// runs it, and /stats and POST /admin/expire read it.
#ifndef NBSPAMD_SERVER_MODEL_EXPIRY_SETUP_H_
#define NBSPAMD_SERVER_MODEL_EXPIRY_SETUP_H_

#include "config/settings.h"
#include "core/model_expiry.h"

namespace nbspamd::server {

[[nodiscard]] core::ExpiryPolicy ExpiryPolicyOf(const config::Settings& settings);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_MODEL_EXPIRY_SETUP_H_
