// TokenTable: a compact hash map from token hash to per-class counts; the storage of one
// CountCache shard.
//
//   TokenTable table;
//   table.Set(hash, counts);                 // empty or all-zero counts erase the token
//   std::uint64_t row[2] = {};
//   bool known = table.CopyCounts(hash, row);
//
// Layout: open addressing with linear probing over 16-byte slots (hash, two 32-bit counts), at
// most 3/4 full, so a two-class token whose counts fit 32 bits costs 21 to 43 bytes. Any other
// token (more than two classes, or a count of 2^32 - 1 or more) keeps a marker in its slot and
// its full counts in a side map, so every number of classes and every 64-bit count is kept.
// Erasing shifts the following slots back (no tombstones), so lookups never slow down with
// churn.
#ifndef NBSPAMD_STORAGE_TOKEN_TABLE_H_
#define NBSPAMD_STORAGE_TOKEN_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/token_bag.h"

namespace nbspamd::storage {

// Per-class counts of one token; index c is class c. May be shorter than the class list (the
// missing classes count 0). An all-zero token is not stored.
using TokenCounts = std::vector<std::uint64_t>;

// Removes `counts`' trailing zeros: the form a token record is stored in.
inline void TrimZeros(TokenCounts& counts) {
  while (!counts.empty() && counts.back() == 0) counts.pop_back();
}

// Thread safety: const methods may run concurrently with each other; a non-const method needs
// exclusive access. The one exception is Prefetch, which may run at any time, also during a
// non-const method (the owner's lock is not needed for a hint).
class TokenTable {
 private:
  struct Slot;

 public:
  // An owned slot array, built by Rehashed and handed to Install.
  class Slots {
   public:
    Slots() = default;
    Slots(Slots&& other) noexcept;
    Slots& operator=(Slots&& other) noexcept;
    ~Slots();

   private:
    friend class TokenTable;
    Slots(Slot* slots, unsigned capacity_bits) : slots_(slots), capacity_bits_(capacity_bits) {}
    Slot* slots_ = nullptr;
    unsigned capacity_bits_ = 0;
  };

  // An empty table with room for `expected_tokens` before it grows.
  explicit TokenTable(std::size_t expected_tokens = 0);
  TokenTable(const TokenTable&) = delete;
  TokenTable& operator=(const TokenTable&) = delete;
  ~TokenTable();

  // Copies the counts of `hash` into counts[0..counts.size()) and returns true; classes the
  // token does not have are left untouched (the caller zero-fills). False when unknown.
  bool CopyCounts(TokenHash hash, std::span<std::uint64_t> counts) const;

  // The counts of `hash` without trailing zeros (empty when unknown).
  [[nodiscard]] TokenCounts Get(TokenHash hash) const;

  // Sets the counts of `hash`; empty or all-zero counts erase it. Grows the table in place when
  // it would be more than 3/4 full.
  void Set(TokenHash hash, std::span<const std::uint64_t> counts);

  // The number of stored tokens.
  [[nodiscard]] std::size_t size() const { return size_; }

  // The number of slots (a power of two).
  [[nodiscard]] std::size_t capacity() const { return std::size_t{1} << capacity_bits_; }

  // The heap bytes the table holds: slots plus the side map's entries.
  [[nodiscard]] std::size_t MemoryBytes() const;

  // Growth in two steps so readers never wait for a rehash: Rehashed is const (it may run while
  // readers read this table), and Install only swaps the arrays under the owner's lock, handing
  // back the old one to be freed after the lock is released.
  //
  // True when adding `new_tokens` tokens would make the table more than 3/4 full.
  [[nodiscard]] bool NeedsGrowth(std::size_t new_tokens) const;
  // A copy of the current slots rehashed for `tokens` tokens at most 3/4 full.
  [[nodiscard]] Slots Rehashed(std::size_t tokens) const;
  // Replaces the slots by `slots`, which must come from Rehashed with no change in between.
  [[nodiscard]] Slots Install(Slots slots);

  // Calls visit(hash, counts) for every stored token, in slot order (counts without trailing
  // zeros, valid for the call only). A const method: the owner's shared lock suffices.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    const Slot* const slots = slots_.load(std::memory_order_relaxed);
    const std::size_t end = capacity();
    for (std::size_t i = 0; i < end; ++i) {
      const Slot& slot = slots[i];
      if (slot.counts[0] == 0 && slot.counts[1] == 0) continue;
      if (slot.counts[0] == kOverflow) {
        const TokenCounts& counts = overflow_.at(slot.hash);
        visit(slot.hash, std::span<const std::uint64_t>(counts));
        continue;
      }
      const std::uint64_t counts[2] = {slot.counts[0], slot.counts[1]};
      visit(slot.hash, std::span<const std::uint64_t>(counts, slot.counts[1] == 0 ? 1 : 2));
    }
  }

  // Asks the CPU to fetch the slot where a lookup of `hash` starts, so that lookups of many
  // tokens overlap their cache misses. Only a hint: it reads nothing a writer protects.
  void Prefetch(TokenHash hash) const;

 private:
  struct Slot {
    TokenHash hash;
    // Both zero: the slot is free. counts[0] == kOverflow: the counts are in overflow_.
    std::uint32_t counts[2];
  };
  static constexpr std::uint32_t kOverflow = 0xFFFFFFFF;

  // The slot where the probe for `hash` starts in a table of 2^bits slots.
  [[nodiscard]] static std::size_t HomeOf(TokenHash hash, unsigned bits);
  // The slot holding `hash`, or nullptr.
  [[nodiscard]] const Slot* Find(TokenHash hash) const;
  // Puts a token known to be absent into `slots` of 2^bits slots.
  static void PlaceNew(Slot* slots, unsigned bits, const Slot& slot);
  void Erase(TokenHash hash);

  // Atomic only so that Prefetch may read them without the owner's lock: Install stores slots_
  // before capacity_bits_, and Prefetch loads them in the other order, so the index it computes
  // is always inside an array slots_ pointed to.
  std::atomic<Slot*> slots_;
  std::atomic<unsigned> capacity_bits_;
  std::size_t size_ = 0;
  std::unordered_map<TokenHash, TokenCounts> overflow_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_TOKEN_TABLE_H_
