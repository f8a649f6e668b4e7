// Readiness: whether the daemon does all of its work now, for GET /readyz and /healthz. A daemon
// that is alive (it answers /healthz) can still be degraded: its store takes no writes after a
// fault of the machine, or in cluster mode it cannot read the training stream or lags far
// behind it. It then still classifies, with the model it has.
#ifndef NBSPAMD_CORE_READINESS_H_
#define NBSPAMD_CORE_READINESS_H_

#include <optional>
#include <string>
#include <vector>

#include "core/replication_status.h"
#include "storage/write_health.h"

namespace nbspamd::core {

// A cluster daemon whose model is further than this behind the stream's last entry is degraded.
inline constexpr double kReadyMaxLagSeconds = 60;

struct Readiness {
  // Each reason for being degraded, for people: "read_only: disk full: ...",
  // "cluster: redis unreachable, lag 12 s", "cluster: lag 75 s". Empty when ready.
  std::vector<std::string> degraded;

  [[nodiscard]] bool ready() const { return degraded.empty(); }
};

// The readiness that `store` and, in cluster mode, `cluster` make.
[[nodiscard]] Readiness ReadinessOf(const storage::WriteHealth& store,
                                    const std::optional<ClusterStatus>& cluster);

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_READINESS_H_
