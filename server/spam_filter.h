// SpamFilter: the daemon's operations (classify, train, forget, stats) on plain values, with no
// HTTP in sight. It wires tokenizer → model ← storage and owns the one-writer rule for training.
//
//   SpamFilter filter(std::move(store), options);
//   auto verdict = filter.Classify(message_bytes, /*explain=*/5);
//   auto learned = filter.Train(message_bytes, "spam", /*id=*/std::nullopt);
#ifndef NBSPAMD_SERVER_SPAM_FILTER_H_
#define NBSPAMD_SERVER_SPAM_FILTER_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "model/classifier.h"
#include "model/learning.h"
#include "storage/store.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::server {

struct SpamFilterOptions {
  double alpha = 1.0;
  double spam_threshold = 0.04;  // See config::Settings::spam_threshold.
  tokenizer::TokenizerOptions tokenizer;
};

struct ClassifyOutcome {
  model::ClassifyResult result;
  std::uint64_t tokens = 0;  // Token occurrences found in the message (known or not).
};

struct TrainOutcome {
  std::string id;
  std::string label;
  model::LearnStatus status = model::LearnStatus::kUnchanged;
  std::uint64_t tokens = 0;
};

// Thread safety: every method may be called from any thread. Classify never waits for
// training; Train and Forget are serialised among themselves.
class SpamFilter {
 public:
  // REQUIRES: options.alpha > 0.
  SpamFilter(std::unique_ptr<storage::Store> store, SpamFilterOptions options);

  // Errors: kInvalidArgument for an empty message, kFailedPrecondition before anything was
  // learned.
  [[nodiscard]] std::expected<ClassifyOutcome, Error> Classify(std::string_view message,
                                                               std::size_t explain) const;

  // Learns `message` as `label` under `id`, or under the message's content hash when no id is
  // given. Errors: kInvalidArgument for an empty message, a bad label or a bad id; kInternal
  // or kDataLoss from storage.
  [[nodiscard]] std::expected<TrainOutcome, Error> Train(std::string_view message,
                                                         std::string_view label,
                                                         std::optional<std::string_view> id);

  // Forgets the message learned under `id`. Errors: kNotFound when nothing was learned under it.
  [[nodiscard]] std::expected<std::string, Error> ForgetId(std::string_view id);
  // Forgets a message given by its content (its id is its content hash).
  [[nodiscard]] std::expected<std::string, Error> ForgetMessage(std::string_view message);

  [[nodiscard]] std::shared_ptr<const model::ModelStats> Stats() const { return store_->Stats(); }
  [[nodiscard]] const SpamFilterOptions& options() const { return options_; }

  // The id a message gets when the client gives none: 32 hex digits of XXH3-128 of its bytes.
  [[nodiscard]] static std::string ContentId(std::string_view message);
  // A label is 1 to 64 characters of A-Z a-z 0-9 _ . -
  [[nodiscard]] static std::expected<void, Error> ValidateLabel(std::string_view label);
  // An id is 1 to 256 bytes with no control characters.
  [[nodiscard]] static std::expected<void, Error> ValidateId(std::string_view id);

 private:
  std::unique_ptr<storage::Store> store_;
  SpamFilterOptions options_;
  tokenizer::Tokenizer tokenizer_;
  std::mutex writer_mutex_;  // The one writer: ledger look-up, planning and Apply together.
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SPAM_FILTER_H_
