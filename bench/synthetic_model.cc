#include "bench/synthetic_model.h"

#include <algorithm>
#include <unordered_set>

#include "storage/store.h"

namespace nbspamd::bench {
namespace {

// SplitMix64's finaliser: a bijection on 64-bit integers with good mixing.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

model::ModelStats DefaultStats() {
  model::ModelStats stats;
  for (std::string_view label : storage::kDefaultLabels) {
    stats.classes.push_back({std::string(label), 0, 0});
  }
  return stats;
}

}  // namespace

TokenHash SyntheticToken(std::uint64_t index) { return Mix(index); }

storage::TokenCounts SyntheticCounts(std::uint64_t index) {
  const std::uint64_t bits = Mix(index ^ 0x5555555555555555ull);
  // About 40% spam only, 40% ham only, 20% both; counts mostly 1 or 2, sometimes up to 64.
  const std::uint64_t count = 1 + ((bits >> 8) % 8 == 0 ? (bits >> 16) % 64 : (bits >> 16) % 2);
  switch (bits % 5) {
    case 0:
    case 1:
      return {count, 0};
    case 2:
    case 3:
      return {0, count};
    default:
      return {count, 1 + (bits >> 32) % 3};
  }
}

model::Delta SyntheticTokensDelta(std::uint64_t first, std::uint64_t last, std::int64_t documents) {
  model::Delta delta;
  delta.token_changes.reserve(2 * (last - first));
  for (std::uint64_t index = first; index < last; ++index) {
    const storage::TokenCounts counts = SyntheticCounts(index);
    for (std::uint32_t c = 0; c < counts.size(); ++c) {
      if (counts[c] != 0) {
        delta.token_changes.push_back(
            {SyntheticToken(index), c, static_cast<std::int64_t>(counts[c])});
      }
    }
  }
  delta.document_changes = {{0, documents}, {1, documents}};
  return delta;
}

std::expected<void, Error> WriteSyntheticModel(storage::Store& store, std::uint64_t tokens,
                                               std::uint64_t batch) {
  for (std::uint64_t first = 0; first < tokens; first += batch) {
    const std::uint64_t last = std::min(tokens, first + batch);
    // About one document per 100 distinct tokens, as in real mail.
    auto applied = store.Apply(
        SyntheticTokensDelta(first, last, static_cast<std::int64_t>((last - first) / 100 + 1)));
    if (!applied) return applied;
  }
  return {};
}

void LoadSyntheticModel(storage::CountCache& cache, std::uint64_t tokens) {
  model::ModelStats stats = DefaultStats();
  cache.Reserve(tokens);
  for (std::uint64_t index = 0; index < tokens; ++index) {
    const storage::TokenCounts counts = SyntheticCounts(index);
    for (std::size_t c = 0; c < counts.size(); ++c) stats.classes[c].tokens += counts[c];
    cache.Load(SyntheticToken(index), counts);
  }
  for (model::ClassStats& c : stats.classes) c.documents = tokens / 100 + 1;
  stats.vocabulary_size = tokens;
  const std::pair<TokenHash, storage::TokenCounts> none[1];
  cache.Publish(std::span(none, 0), std::make_shared<const model::ModelStats>(std::move(stats)));
}

TokenBag SyntheticMessage(std::mt19937_64& random, std::uint64_t tokens, std::size_t size) {
  size = std::min<std::uint64_t>(size, tokens);
  std::unordered_set<std::uint64_t> picked;
  while (picked.size() < size) picked.insert(random() % tokens);
  TokenBag bag;
  for (std::uint64_t index : picked) {
    bag.entries.push_back({SyntheticToken(index), static_cast<std::uint32_t>(1 + random() % 3)});
  }
  std::sort(bag.entries.begin(), bag.entries.end(),
            [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; });
  return bag;
}

}  // namespace nbspamd::bench
