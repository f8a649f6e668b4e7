#include "core/pending_model.h"

#include <algorithm>
#include <memory>

namespace nbspamd::core {
namespace {

// count + change, stopping at zero.
std::uint64_t Added(std::uint64_t count, std::int64_t change) {
  if (change < 0 && static_cast<std::uint64_t>(-change) > count) return 0;
  return count + static_cast<std::uint64_t>(change);
}

bool AnyNonZero(const std::vector<std::uint64_t>& counts) {
  return std::any_of(counts.begin(), counts.end(), [](std::uint64_t n) { return n != 0; });
}

}  // namespace

PendingModel::PendingModel(const storage::Store& store) : store_(store), stats_(*store.Stats()) {}

void PendingModel::Fold(const model::Delta& delta) {
  folded_ = true;
  for (const std::string& label : delta.new_classes) stats_.classes.push_back({label, 0, 0});
  const std::size_t classes = stats_.classes.size();
  for (const model::DocumentCountChange& change : delta.document_changes) {
    if (change.class_index >= classes) continue;
    model::ClassStats& c = stats_.classes[change.class_index];
    c.documents = Added(c.documents, change.change);
  }

  // The published counts of the tokens met for the first time, read at once.
  std::vector<BagEntry> unseen;
  for (const model::TokenCountChange& change : delta.token_changes) {
    if (!counts_.contains(change.hash)) unseen.push_back({change.hash, 1});
  }
  std::sort(unseen.begin(), unseen.end(),
            [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; });
  unseen.erase(std::unique(unseen.begin(), unseen.end(),
                           [](const BagEntry& a, const BagEntry& b) { return a.hash == b.hash; }),
               unseen.end());
  if (!unseen.empty()) {
    const model::Snapshot published = store_.Read(unseen);
    for (std::size_t i = 0; i < unseen.size(); ++i) {
      const auto row = published.CountsOf(i);
      counts_.emplace(unseen[i].hash, std::vector<std::uint64_t>(row.begin(), row.end()));
    }
  }

  for (const model::TokenCountChange& change : delta.token_changes) {
    if (change.class_index >= classes) continue;
    std::vector<std::uint64_t>& counts = counts_[change.hash];
    const bool was_known = AnyNonZero(counts);
    counts.resize(std::max(counts.size(), classes), 0);
    model::ClassStats& c = stats_.classes[change.class_index];
    const std::uint64_t before = counts[change.class_index];
    counts[change.class_index] = Added(before, change.change);
    c.tokens = Added(c.tokens, static_cast<std::int64_t>(counts[change.class_index]) -
                                   static_cast<std::int64_t>(before));
    const bool is_known = AnyNonZero(counts);
    if (is_known && !was_known) ++stats_.vocabulary_size;
    if (!is_known && was_known && stats_.vocabulary_size > 0) --stats_.vocabulary_size;
  }
}

model::Snapshot PendingModel::Read(std::span<const BagEntry> entries) const {
  model::Snapshot published = store_.Read(entries);
  if (!folded_) return published;  // Nothing pending: the published state is the pending one.
  const std::size_t classes = stats_.classes.size();
  model::Snapshot snapshot{std::make_shared<const model::ModelStats>(stats_), {}};
  snapshot.counts.assign(entries.size() * classes, 0);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto pending = counts_.find(entries[i].hash);
    const auto row = published.CountsOf(i);
    for (std::size_t c = 0; c < classes; ++c) {
      if (pending != counts_.end()) {
        if (c < pending->second.size()) snapshot.counts[i * classes + c] = pending->second[c];
      } else if (c < row.size()) {
        snapshot.counts[i * classes + c] = row[c];
      }
    }
  }
  return snapshot;
}

}  // namespace nbspamd::core
