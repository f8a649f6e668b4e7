// ModelStats: the model-wide numbers of multinomial naive Bayes, apart from per-token counts.
#ifndef NBSPAMD_MODEL_MODEL_STATS_H_
#define NBSPAMD_MODEL_MODEL_STATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::model {

// One class (a label such as "spam"): N_c, the documents learned as this class, and n_c, the sum
// of all token counts learned as this class.
struct ClassStats {
  std::string label;
  std::uint64_t documents = 0;
  std::uint64_t tokens = 0;

  friend bool operator==(const ClassStats&, const ClassStats&) = default;
};

// Classes in creation order (a class's index never changes) and |V|, the number of distinct
// tokens with a non-zero count in at least one class.
struct ModelStats {
  std::vector<ClassStats> classes;
  std::uint64_t vocabulary_size = 0;

  // The index of the class named `label`, if it exists.
  [[nodiscard]] std::optional<std::size_t> FindClass(std::string_view label) const {
    for (std::size_t i = 0; i < classes.size(); ++i) {
      if (classes[i].label == label) return i;
    }
    return std::nullopt;
  }

  // N, the documents learned in all classes.
  [[nodiscard]] std::uint64_t TotalDocuments() const {
    std::uint64_t total = 0;
    for (const ClassStats& c : classes) total += c.documents;
    return total;
  }

  friend bool operator==(const ModelStats&, const ModelStats&) = default;
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_MODEL_STATS_H_
