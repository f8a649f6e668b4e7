#include "core/readiness.h"

#include <cmath>

namespace nbspamd::core {
namespace {

std::string Seconds(double seconds) { return std::to_string(std::llround(seconds)) + " s"; }

}  // namespace

Readiness ReadinessOf(const storage::WriteHealth& store,
                      const std::optional<ClusterStatus>& cluster) {
  Readiness readiness;
  if (!store.writable) readiness.degraded.push_back("read_only: " + store.reason);
  if (cluster) {
    if (cluster->gap) {
      readiness.degraded.push_back(
          "cluster: stopped: the training stream was trimmed past this daemon's model");
    } else if (cluster->stream_behind) {
      readiness.degraded.push_back("cluster: " + cluster->stream_behind_reason);
    } else if (!cluster->connected) {
      readiness.degraded.push_back("cluster: redis unreachable, lag " +
                                   Seconds(cluster->lag_seconds));
    } else if (cluster->lag_seconds > kReadyMaxLagSeconds) {
      readiness.degraded.push_back("cluster: lag " + Seconds(cluster->lag_seconds));
    }
  }
  return readiness;
}

}  // namespace nbspamd::core
