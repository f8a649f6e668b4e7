// FakeSpamdBackend: a deterministic SpamdBackend for the spamd tests. A message containing
// "viagra" is spam (score 2.0), any other ham (score −1.0), with spam_threshold 1.0; TELL
// remembers what it learned, by content, so relearning reports no change and forgetting an
// unknown message is kNotFound, as the core does. Completions run on the calling thread, unless
// held (HoldCompletions) until Release, so a test can keep a request inside the backend.
// Thread-safe.
#ifndef NBSPAMD_SPAMD_TESTING_FAKE_BACKEND_H_
#define NBSPAMD_SPAMD_TESTING_FAKE_BACKEND_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "spamd/backend.h"

namespace nbspamd::spamd {

class FakeSpamdBackend : public SpamdBackend {
 public:
  struct Call {
    std::string operation;  // "classify", "learn" or "forget".
    std::string message;
    RequestContext context;
    std::optional<SpamdLabel> label;
  };

  void ClassifyAsync(std::string_view message, const RequestContext& context,
                     ClassifyDone done) override {
    Record("classify", message, context, std::nullopt);
    std::unique_lock lock(mutex_);
    if (throw_on_classify_) throw std::runtime_error("a bug in the backend");
    std::expected<SpamdVerdict, Error> result;
    if (classify_error_) {
      result = std::unexpected(*classify_error_);
    } else {
      SpamdVerdict verdict;
      const bool spam = message.find("viagra") != std::string_view::npos;
      verdict.score = spam ? 2.0 : -1.0;
      verdict.verdict = spam ? SpamdVerdictKind::kSpam : SpamdVerdictKind::kHam;
      verdict.spam_confidence = spam ? 0.97 : 0.02;
      verdict.spam_threshold = 1.0;
      result = verdict;
    }
    Complete(lock, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }

  void LearnAsync(std::string_view message, SpamdLabel label, const RequestContext& context,
                  TellDone done) override {
    Record("learn", message, context, label);
    std::unique_lock lock(mutex_);
    auto [entry, inserted] = learned_.try_emplace(std::string(message), label);
    SpamdTellOutcome outcome;
    outcome.changed = inserted || entry->second != label;
    entry->second = label;
    Complete(lock, [done = std::move(done), outcome]() mutable { done(outcome); });
  }

  void ForgetAsync(std::string_view message, const RequestContext& context,
                   TellDone done) override {
    Record("forget", message, context, std::nullopt);
    std::unique_lock lock(mutex_);
    std::expected<SpamdTellOutcome, Error> result;
    if (learned_.erase(std::string(message)) == 0) {
      result = std::unexpected(Error{ErrorCode::kNotFound, "never learned"});
    } else {
      result = SpamdTellOutcome{true};
    }
    Complete(lock, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }

  // Forgets the calls recorded and the messages learned.
  void Reset() {
    std::lock_guard lock(mutex_);
    calls_.clear();
    learned_.clear();
  }
  std::vector<Call> Calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  void SetClassifyError(std::optional<Error> error) {
    std::lock_guard lock(mutex_);
    classify_error_ = std::move(error);
  }
  void SetThrowOnClassify(bool value) {
    std::lock_guard lock(mutex_);
    throw_on_classify_ = value;
  }
  void HoldCompletions(bool value) {
    std::lock_guard lock(mutex_);
    hold_ = value;
  }
  // Waits until `count` completions are held.
  void WaitForHeld(std::size_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return held_.size() >= count; });
  }
  // Runs the held completions (on this thread) and stops holding.
  void Release() {
    std::vector<std::move_only_function<void()>> held;
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
      held.swap(held_);
    }
    for (auto& completion : held) completion();
  }

 private:
  void Record(std::string operation, std::string_view message, const RequestContext& context,
              std::optional<SpamdLabel> label) {
    std::lock_guard lock(mutex_);
    Call call;
    call.operation = std::move(operation);
    call.message = std::string(message);
    call.context = context;
    call.label = label;
    calls_.push_back(std::move(call));
  }
  void Complete(std::unique_lock<std::mutex>& lock, std::move_only_function<void()> completion) {
    if (hold_) {
      held_.push_back(std::move(completion));
      changed_.notify_all();
      return;
    }
    lock.unlock();
    completion();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Call> calls_;
  std::map<std::string, SpamdLabel> learned_;
  std::optional<Error> classify_error_;
  bool throw_on_classify_ = false;
  bool hold_ = false;
  std::vector<std::move_only_function<void()>> held_;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_TESTING_FAKE_BACKEND_H_
