#include "common/token_texts.h"

#include <cassert>
#include <utility>

namespace nbspamd {

TokenTexts TokenTexts::Reordered(std::vector<std::uint32_t> order) && {
  assert(order.size() == spans_.size());
  TokenTexts reordered;
  reordered.bytes_ = std::move(bytes_);
  reordered.spans_ = std::move(spans_);
  if (order_.empty()) {
    reordered.order_ = std::move(order);
  } else {  // Reordered twice: the composition.
    reordered.order_.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) reordered.order_[i] = order_[order[i]];
  }
  return reordered;
}

bool operator==(const TokenTexts& a, const TokenTexts& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace nbspamd
