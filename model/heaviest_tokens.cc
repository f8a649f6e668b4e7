#include "model/heaviest_tokens.h"

#include <algorithm>
#include <utility>

namespace nbspamd::model {

HeaviestTokens::HeaviestTokens(std::size_t keep) : keep_(keep) {
  heap_.reserve(std::min<std::size_t>(keep_, 64));
}

void HeaviestTokens::Push(const WeighedToken& token) {
  heap_.push_back(token);
  std::push_heap(heap_.begin(), heap_.end(), ComesBefore);
}

void HeaviestTokens::ReplaceLast(const WeighedToken& token) {
  // `token` sinks from the root past every child that comes after it.
  const std::size_t size = heap_.size();
  std::size_t at = 0;
  for (std::size_t child = 1; child < size; child = 2 * at + 1) {
    if (child + 1 < size && ComesBefore(heap_[child], heap_[child + 1])) ++child;
    if (!ComesBefore(token, heap_[child])) break;
    heap_[at] = heap_[child];
    at = child;
  }
  heap_[at] = token;
}

std::vector<WeighedToken> HeaviestTokens::InOrder() && {
  std::sort_heap(heap_.begin(), heap_.end(), ComesBefore);
  return std::move(heap_);
}

}  // namespace nbspamd::model
