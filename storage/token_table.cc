#include "storage/token_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace nbspamd::storage {
namespace {

constexpr unsigned kMinimumCapacityBits = 4;
// Arrays this large are aligned to it and asked for transparent huge pages: a lookup in a big
// table is a TLB miss on 4 KiB pages, and one 2 MiB page covers 131072 slots.
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// The fewest bits for which 2^bits slots hold `tokens` at most 3/4 full.
unsigned CapacityBitsFor(std::size_t tokens) {
  unsigned bits = kMinimumCapacityBits;
  while ((std::size_t{3} << bits) / 4 < tokens) ++bits;
  return bits;
}

// A zeroed array of `bytes` bytes (a power of two). Throws std::bad_alloc like the standard
// containers when memory runs out.
void* AllocateZeroed(std::size_t bytes) {
  if (bytes < kHugePageBytes) {
    void* memory = std::calloc(1, bytes);
    if (memory == nullptr) throw std::bad_alloc();
    return memory;
  }
  void* memory = std::aligned_alloc(kHugePageBytes, bytes);
  if (memory == nullptr) throw std::bad_alloc();
  madvise(memory, bytes, MADV_HUGEPAGE);  // Only a hint: failure leaves 4 KiB pages.
  std::memset(memory, 0, bytes);
  return memory;
}

}  // namespace

TokenTable::Slots::Slots(Slots&& other) noexcept
    : slots_(std::exchange(other.slots_, nullptr)), capacity_bits_(other.capacity_bits_) {}

TokenTable::Slots& TokenTable::Slots::operator=(Slots&& other) noexcept {
  std::swap(slots_, other.slots_);
  std::swap(capacity_bits_, other.capacity_bits_);
  return *this;
}

TokenTable::Slots::~Slots() { std::free(slots_); }

TokenTable::TokenTable(std::size_t expected_tokens) {
  const unsigned bits = CapacityBitsFor(expected_tokens);
  slots_.store(static_cast<Slot*>(AllocateZeroed(sizeof(Slot) << bits)));
  capacity_bits_.store(bits);
}

TokenTable::~TokenTable() { std::free(slots_.load(std::memory_order_relaxed)); }

std::size_t TokenTable::HomeOf(TokenHash hash, unsigned bits) {
  // Fibonacci hashing: the top bits of the product depend on every bit of the hash, so
  // sequential or shard-aligned hashes still spread.
  return static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

const TokenTable::Slot* TokenTable::Find(TokenHash hash) const {
  const unsigned bits = capacity_bits_.load(std::memory_order_relaxed);
  const Slot* slots = slots_.load(std::memory_order_relaxed);
  const std::size_t mask = (std::size_t{1} << bits) - 1;
  for (std::size_t i = HomeOf(hash, bits);; i = (i + 1) & mask) {
    const Slot& slot = slots[i];
    if (slot.counts[0] == 0 && slot.counts[1] == 0) return nullptr;
    if (slot.hash == hash) return &slot;
  }
}

bool TokenTable::CopyCounts(TokenHash hash, std::span<std::uint64_t> counts) const {
  const Slot* slot = Find(hash);
  if (slot == nullptr) return false;
  if (slot->counts[0] == kOverflow) {
    const TokenCounts& stored = overflow_.at(hash);
    std::copy_n(stored.begin(), std::min(stored.size(), counts.size()), counts.begin());
    return true;
  }
  for (std::size_t c = 0; c < std::min<std::size_t>(2, counts.size()); ++c) {
    counts[c] = slot->counts[c];
  }
  return true;
}

TokenCounts TokenTable::Get(TokenHash hash) const {
  const Slot* slot = Find(hash);
  if (slot == nullptr) return {};
  if (slot->counts[0] == kOverflow) return overflow_.at(hash);
  if (slot->counts[1] == 0) return {slot->counts[0]};
  return {slot->counts[0], slot->counts[1]};
}

void TokenTable::Set(TokenHash hash, std::span<const std::uint64_t> counts) {
  std::size_t length = counts.size();
  while (length > 0 && counts[length - 1] == 0) --length;
  if (length == 0) {
    Erase(hash);
    return;
  }
  counts = counts.first(length);
  const bool fits_inline =
      length <= 2 &&
      std::all_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n < kOverflow; });
  Slot slot{hash, {kOverflow, 0}};
  if (fits_inline) {
    slot.counts[0] = static_cast<std::uint32_t>(counts[0]);
    slot.counts[1] = length == 2 ? static_cast<std::uint32_t>(counts[1]) : 0;
  }
  if (Slot* found = const_cast<Slot*>(Find(hash))) {
    if (found->counts[0] == kOverflow && fits_inline) overflow_.erase(hash);
    *found = slot;
  } else {
    if (NeedsGrowth(1)) (void)Install(Rehashed(size_ + 1));
    PlaceNew(slots_.load(std::memory_order_relaxed), capacity_bits_.load(std::memory_order_relaxed),
             slot);
    ++size_;
  }
  if (!fits_inline) overflow_.insert_or_assign(hash, TokenCounts(counts.begin(), counts.end()));
}

void TokenTable::PlaceNew(Slot* slots, unsigned bits, const Slot& slot) {
  const std::size_t mask = (std::size_t{1} << bits) - 1;
  std::size_t i = HomeOf(slot.hash, bits);
  while (slots[i].counts[0] != 0 || slots[i].counts[1] != 0) i = (i + 1) & mask;
  slots[i] = slot;
}

void TokenTable::Erase(TokenHash hash) {
  const Slot* found = Find(hash);
  if (found == nullptr) return;
  if (found->counts[0] == kOverflow) overflow_.erase(hash);
  Slot* slots = slots_.load(std::memory_order_relaxed);
  const unsigned bits = capacity_bits_.load(std::memory_order_relaxed);
  const std::size_t mask = (std::size_t{1} << bits) - 1;
  // Backward shift: move each following slot of the probe run into the hole when the hole lies
  // between its home and its place, so every token stays reachable from its home.
  std::size_t hole = static_cast<std::size_t>(found - slots);
  for (std::size_t next = (hole + 1) & mask;; next = (next + 1) & mask) {
    const Slot& candidate = slots[next];
    if (candidate.counts[0] == 0 && candidate.counts[1] == 0) break;
    const std::size_t home = HomeOf(candidate.hash, bits);
    if (((next - home) & mask) >= ((next - hole) & mask)) {
      slots[hole] = candidate;
      hole = next;
    }
  }
  slots[hole] = Slot{0, {0, 0}};
  --size_;
}

std::size_t TokenTable::MemoryBytes() const {
  std::size_t bytes = capacity() * sizeof(Slot) + overflow_.bucket_count() * sizeof(void*);
  for (const auto& [hash, counts] : overflow_) {
    bytes += sizeof(std::pair<const TokenHash, TokenCounts>) + 2 * sizeof(void*) +
             counts.capacity() * sizeof(std::uint64_t);
  }
  return bytes;
}

bool TokenTable::NeedsGrowth(std::size_t new_tokens) const {
  return size_ + new_tokens > (std::size_t{3} << capacity_bits_.load()) / 4;
}

TokenTable::Slots TokenTable::Rehashed(std::size_t tokens) const {
  const unsigned bits = CapacityBitsFor(std::max(tokens, size_));
  Slots rehashed(static_cast<Slot*>(AllocateZeroed(sizeof(Slot) << bits)), bits);
  const Slot* slots = slots_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < capacity(); ++i) {
    if (slots[i].counts[0] != 0 || slots[i].counts[1] != 0) {
      PlaceNew(rehashed.slots_, bits, slots[i]);
    }
  }
  return rehashed;
}

TokenTable::Slots TokenTable::Install(Slots slots) {
  Slots old(slots_.load(std::memory_order_relaxed), capacity_bits_.load(std::memory_order_relaxed));
  slots_.store(std::exchange(slots.slots_, nullptr), std::memory_order_release);
  capacity_bits_.store(slots.capacity_bits_, std::memory_order_release);
  return old;
}

void TokenTable::Prefetch(TokenHash hash) const {
  const unsigned bits = capacity_bits_.load(std::memory_order_acquire);
  const Slot* slots = slots_.load(std::memory_order_acquire);
  __builtin_prefetch(slots + HomeOf(hash, bits));
}

}  // namespace nbspamd::storage
