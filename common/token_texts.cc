#include "common/token_texts.h"

namespace nbspamd {

TokenTexts TokenTexts::Reordered(std::span<const std::uint32_t> order) && {
  TokenTexts reordered;
  reordered.bytes_ = std::move(bytes_);
  reordered.spans_.resize(order.size());
  Span* out = reordered.spans_.data();
  for (const std::uint32_t index : order) *out++ = spans_[index];
  spans_.clear();
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
