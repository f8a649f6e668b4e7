#include "model/heaviest_tokens.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace nbspamd::model {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

HeaviestTokens::HeaviestTokens(std::size_t keep)
    : keep_(keep),
      // Room for three times as many again as are kept (at least 32): a Compact then selects
      // from a buffer a few times the size it keeps, once per that many admissions.
      capacity_(keep + std::max<std::size_t>(32, 3 * std::min<std::size_t>(keep, 1 << 20))),
      // A magnitude of -1 comes after every real one; with nothing to keep, +∞ (and hash 0, before
      // which no hash comes) lets nothing in.
      floor_{.index = 0, .hash = 0, .weight = 0, .magnitude = keep == 0 ? kInfinity : -1.0} {
  candidates_.reserve(std::min<std::size_t>(capacity_, 256));
}

void HeaviestTokens::Compact() {
  std::nth_element(candidates_.begin(), candidates_.begin() + static_cast<long>(keep_ - 1),
                   candidates_.end(), ComesBefore);
  candidates_.resize(keep_);
  floor_ = candidates_.back();
}

std::vector<WeighedToken> HeaviestTokens::InOrder() && {
  if (candidates_.size() > keep_) {
    std::nth_element(candidates_.begin(), candidates_.begin() + static_cast<long>(keep_),
                     candidates_.end(), ComesBefore);
    candidates_.resize(keep_);
  }
  std::sort(candidates_.begin(), candidates_.end(), ComesBefore);
  return std::move(candidates_);
}

}  // namespace nbspamd::model
