// Snapshot: what the classifier reads from storage for one message.
#ifndef NBSPAMD_MODEL_SNAPSHOT_H_
#define NBSPAMD_MODEL_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/model_stats.h"

namespace nbspamd::model {

// The stats and the per-class counts of one bag's tokens, all read from one model state.
// Invariant: counts.size() == entries × stats->classes.size(), row-major in the bag's entry
// order: counts[i * classes + c] is n_wc of entry i in class c (0 for a token never seen).
struct Snapshot {
  std::shared_ptr<const ModelStats> stats;
  std::vector<std::uint64_t> counts;

  [[nodiscard]] std::span<const std::uint64_t> CountsOf(std::size_t entry) const {
    const std::size_t classes = stats->classes.size();
    return std::span<const std::uint64_t>(counts).subspan(entry * classes, classes);
  }
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_SNAPSHOT_H_
