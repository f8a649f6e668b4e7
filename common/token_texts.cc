#include "common/token_texts.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace nbspamd {

TokenTexts TokenTexts::Reordered(std::vector<std::uint32_t> order) && {
  assert(order.size() == spans_.size());
  TokenTexts reordered;
  reordered.bytes_ = std::move(bytes_);
  reordered.capacity_ = capacity_;
  reordered.used_ = used_;
  reordered.spans_ = std::move(spans_);
  if (order_.empty()) {
    reordered.order_ = std::move(order);
  } else {  // Reordered twice: the composition.
    reordered.order_.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) reordered.order_[i] = order_[order[i]];
  }
  return reordered;
}

TokenTexts::TokenTexts(const TokenTexts& other)
    : bytes_(other.used_ == 0 ? nullptr : new char[other.used_]),
      capacity_(other.used_),
      used_(other.used_),
      spans_(other.spans_),
      order_(other.order_) {
  if (used_ != 0) std::memcpy(bytes_.get(), other.bytes_.get(), used_);
}

TokenTexts& TokenTexts::operator=(const TokenTexts& other) {
  if (this != &other) *this = TokenTexts(other);
  return *this;
}

void TokenTexts::Grow(std::size_t more) {
  const std::size_t size = std::max({2 * capacity_, std::size_t{used_} + more, std::size_t{64}});
  std::unique_ptr<char[]> grown(new char[size]);  // Not zeroed: only used_ bytes are read.
  if (used_ != 0) std::memcpy(grown.get(), bytes_.get(), used_);
  bytes_ = std::move(grown);
  capacity_ = size;
}

bool operator==(const TokenTexts& a, const TokenTexts& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace nbspamd
