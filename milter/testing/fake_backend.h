// FakeBackend: a deterministic MilterBackend for tests (the seam the daemon's core plugs into). A
// message containing "viagra" is spam with score 10; anything else is ham with score -5. It can
// be told to fail, to throw a non-standard exception from ClassifyAsync, or to hold its answers
// until released.
#ifndef NBSPAMD_MILTER_TESTING_FAKE_BACKEND_H_
#define NBSPAMD_MILTER_TESTING_FAKE_BACKEND_H_

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "milter/backend.h"

namespace nbspamd::milter::testing {

// Thread-safe.
class FakeBackend : public MilterBackend {
 public:
  struct Call {
    std::string message;
    MessageContext context;
  };

  void ClassifyAsync(std::string message, MessageContext context, ClassifyDone done) override {
    std::expected<MilterVerdict, Error> verdict = Verdict(message);
    std::unique_lock lock(mutex_);
    if (throw_) throw 17;  // No std::exception: a bug of any type.
    calls_.push_back(Call{std::move(message), std::move(context)});
    if (fail_) verdict = std::unexpected(*fail_);
    if (hold_) {
      held_.push_back(Held{std::move(done), std::move(verdict)});
      changed_.notify_all();
      return;
    }
    changed_.notify_all();
    lock.unlock();
    done(std::move(verdict));  // Before ClassifyAsync returns, as the seam allows.
  }

  // From now on every answer is this error (nullopt: answer again).
  void FailWith(std::optional<Error> error) {
    std::lock_guard lock(mutex_);
    fail_ = std::move(error);
  }
  // From now on ClassifyAsync throws an int (or, with false, answers again).
  void Throw(bool on) {
    std::lock_guard lock(mutex_);
    throw_ = on;
  }
  // From now on answers wait for Release.
  void Hold() {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  // Answers every held call (on this thread) and stops holding.
  void Release() {
    std::vector<Held> held;
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
      held.swap(held_);
    }
    for (Held& h : held) h.done(std::move(h.verdict));
  }
  // Waits (at most `timeout`) until `count` calls are held; false on timeout.
  bool WaitHeld(std::size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return held_.size() >= count; });
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

  static MilterVerdict Verdict(const std::string& message) {
    MilterVerdict verdict;
    const bool spam = message.find("viagra") != std::string::npos;
    verdict.verdict = spam ? MilterVerdict::Kind::kSpam : MilterVerdict::Kind::kHam;
    verdict.score = spam ? 10.0 : -5.0;
    if (spam) verdict.spam_confidence = 0.99;
    return verdict;
  }

 private:
  struct Held {
    ClassifyDone done;
    std::expected<MilterVerdict, Error> verdict;
  };
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Call> calls_;
  std::vector<Held> held_;
  std::optional<Error> fail_;
  bool throw_ = false;
  bool hold_ = false;
};

}  // namespace nbspamd::milter::testing

#endif  // NBSPAMD_MILTER_TESTING_FAKE_BACKEND_H_
