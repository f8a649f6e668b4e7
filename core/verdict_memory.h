// VerdictMemory: the latest verdicts of SpamFilter::Classify by message id (the id a front end
// gave, e.g. a Message-ID, else the message's content id), so that a later train of the same
// message tells whether that verdict was right, whichever front end classified and trained it.
// Bounded: each of its shards forgets its oldest verdict when full.
//
//   memory.Remember(id, /*spam=*/true);              // on classify
//   std::optional<bool> was_spam = memory.Take(id);  // on train: the verdict, once
#ifndef NBSPAMD_CORE_VERDICT_MEMORY_H_
#define NBSPAMD_CORE_VERDICT_MEMORY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace nbspamd::core {

// What a train as spam or ham said about the verdict remembered for the same message.
enum class Feedback { kAgreed, kFalsePositive, kFalseNegative };

// Thread-safe; keys are spread over shards with a lock each, so no lock is shared by all
// requests.
class VerdictMemory {
 public:
  // Remembers about `capacity` verdicts in all (at least one a shard).
  explicit VerdictMemory(std::size_t capacity = std::size_t{1} << 17);

  // Remembers that `key` was classified as spam or not, replacing an earlier verdict.
  void Remember(std::string_view key, bool spam);
  // The verdict remembered for `key`, which is then forgotten; nullopt when there is none.
  [[nodiscard]] std::optional<bool> Take(std::string_view key);

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::uint64_t, bool> verdicts;  // By the key's 64-bit hash.
    std::deque<std::uint64_t> order;                   // Oldest first; may hold stale keys.
  };

  const std::size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_VERDICT_MEMORY_H_
