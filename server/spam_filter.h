// SpamFilter: the daemon's operations (classify, train, forget, stats) on plain values, with no
// HTTP in sight. It wires tokenizer → model ← storage and owns the one-writer rule for training:
// training requests are tokenized on the caller's thread and then go through one
// TrainingWriter, which commits them in groups (one synced write for many requests).
//
//   SpamFilter filter(std::move(store), options);
//   auto verdict = filter.Classify(message_bytes, /*explain=*/5);
//   auto learned = filter.Train(message_bytes, "spam", /*id=*/std::nullopt);     // blocks
//   filter.TrainAsync(message_bytes, "spam", id, [](auto learned) { ... });     // does not
#ifndef NBSPAMD_SERVER_SPAM_FILTER_H_
#define NBSPAMD_SERVER_SPAM_FILTER_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "model/classifier.h"
#include "model/learning.h"
#include "server/training_writer.h"
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

using TrainDone = std::move_only_function<void(std::expected<TrainOutcome, Error>)>;
using ForgetDone = std::move_only_function<void(std::expected<std::string, Error>)>;

// Thread safety: every method may be called from any thread. Classify never waits for
// training. Training requests are applied one at a time in the order the writer takes them;
// each is acknowledged only once it is durable.
class SpamFilter {
 public:
  // REQUIRES: options.alpha > 0.
  SpamFilter(std::unique_ptr<storage::Store> store, SpamFilterOptions options);

  // Errors: kInvalidArgument for an empty message, kFailedPrecondition before anything was
  // learned.
  [[nodiscard]] std::expected<ClassifyOutcome, Error> Classify(std::string_view message,
                                                               std::size_t explain) const;

  // Learns `message` as `label` under `id`, or under the message's content hash when no id is
  // given. Tokenizes on the calling thread, then queues the request for the writer; `message`
  // is not used after the call returns. `done` runs exactly once: on the calling thread before
  // the call returns for a bad request, else on the writer thread once the change is durable
  // (see LearnCompletion for what a completion may do).
  // Errors: kInvalidArgument for an empty message, a bad label or a bad id; kInternal or
  // kDataLoss from storage; kUnavailable after StopTraining.
  void TrainAsync(std::string_view message, std::string_view label,
                  std::optional<std::string_view> id, TrainDone done);

  // Forgets the message learned under `id`, like TrainAsync. Errors: kNotFound when nothing was
  // learned under it.
  void ForgetIdAsync(std::string_view id, ForgetDone done);
  // Forgets a message given by its content (its id is its content hash).
  void ForgetMessageAsync(std::string_view message, ForgetDone done);

  // The same, waiting for the outcome.
  [[nodiscard]] std::expected<TrainOutcome, Error> Train(std::string_view message,
                                                         std::string_view label,
                                                         std::optional<std::string_view> id);
  [[nodiscard]] std::expected<std::string, Error> ForgetId(std::string_view id);
  [[nodiscard]] std::expected<std::string, Error> ForgetMessage(std::string_view message);

  // Finishes the training requests queued so far; later ones fail with kUnavailable. The
  // daemon calls it once serving has stopped, before the store closes. Idempotent.
  void StopTraining() { writer_.Stop(); }

  // Training groups written and training requests completed so far.
  [[nodiscard]] std::uint64_t TrainingGroups() const { return writer_.GroupCount(); }
  [[nodiscard]] std::uint64_t TrainingRequests() const { return writer_.RequestCount(); }

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
  TrainingWriter writer_;  // After store_: stops (draining its queue) before the store closes.
};

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_SPAM_FILTER_H_
