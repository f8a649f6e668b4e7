// Faults in the adapters between the milter and spamd front ends and the core, and on a front
// end's I/O thread: an exception of any type in the work for a request, in its answer or in the
// feedback hook is answered or noted, never the end of the process, and the adapter serves on.
// The faults come from a store that throws a non-standard exception (a seam: storage::Store)
// and from answers and hooks that throw.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/spam_filter.h"
#include "server/front_end_thread.h"
#include "server/milter_core_adapter.h"
#include "server/spamd_core_adapter.h"
#include "storage/testing/forwarding_store.h"

namespace nbspamd::server {
namespace {

// A real store whose Read throws an int (no std::exception) while armed, and waits while closed
// (a worker held busy).
class ThrowingStore final : public storage::testing::ForwardingStore {
 public:
  model::Snapshot Read(std::span<const BagEntry> entries) const override {
    if (armed_) throw 42;
    {
      std::unique_lock lock(gate_mutex_);
      ++readers_;
      gate_changed_.notify_all();
      gate_changed_.wait(lock, [this] { return open_; });
    }
    return ForwardingStore::Read(entries);
  }
  void Arm(bool armed) { armed_ = armed; }
  void Close() {
    std::lock_guard lock(gate_mutex_);
    open_ = false;
    readers_ = 0;
  }
  void Open() {
    std::lock_guard lock(gate_mutex_);
    open_ = true;
    gate_changed_.notify_all();
  }
  // Waits until a reader is held at the closed gate.
  void WaitForReader() {
    std::unique_lock lock(gate_mutex_);
    gate_changed_.wait(lock, [this] { return readers_ > 0; });
  }

 private:
  std::atomic<bool> armed_ = false;
  mutable std::mutex gate_mutex_;
  mutable std::condition_variable gate_changed_;
  bool open_ = true;
  mutable int readers_ = 0;
};

constexpr std::string_view kSpam = "Subject: cheap pills\n\ncheap pills winner prize casino\n";
constexpr std::string_view kHam = "Subject: lunch\n\nlunch meeting agenda team notes\n";

// A core over a ThrowingStore that has learned one spam and one ham, so that it classifies.
class AdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = std::make_unique<ThrowingStore>();
    store_ = store.get();
    filter_ = std::make_unique<core::SpamFilter>(std::move(store), core::SpamFilterOptions{});
    ASSERT_TRUE(filter_->Train(kSpam, "spam", "s1").has_value());
    ASSERT_TRUE(filter_->Train(kHam, "ham", "h1").has_value());
  }

  ThrowingStore* store_ = nullptr;
  std::unique_ptr<core::SpamFilter> filter_;
};

// The answer, or nothing when none came within 10 s.
template <class T>
std::optional<T> Wait(std::future<T>& future) {
  if (future.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return std::nullopt;
  return future.get();
}

// Admission: with one worker held busy and room for two messages, the third is refused at once
// with kUnavailable (the milter's fail mode, spamd's EX_TEMPFAIL), and the two are served once the
// worker is free. Unbounded before: every message waited in the pool's queue.
TEST_F(AdapterTest, MilterAndSpamdRefuseAtOnceOverTheirLimits) {
  const AdmissionLimits limits{.max_requests = 2, .max_bytes = 1 << 20};
  MilterCoreAdapter milter_backend(*filter_, 1, false, limits);
  SpamdCoreAdapter spamd_backend(*filter_, 1, {}, false, limits);
  store_->Close();
  std::promise<std::expected<milter::MilterVerdict, Error>> first, second, third;
  milter_backend.ClassifyAsync(std::string(kSpam), {},
                               [&](auto v) { first.set_value(std::move(v)); });
  store_->WaitForReader();
  milter_backend.ClassifyAsync(std::string(kSpam), {},
                               [&](auto v) { second.set_value(std::move(v)); });
  milter_backend.ClassifyAsync(std::string(kSpam), {},
                               [&](auto v) { third.set_value(std::move(v)); });
  auto refused = third.get_future();
  ASSERT_EQ(refused.wait_for(std::chrono::seconds(0)), std::future_status::ready) << "at once";
  const auto refusal = refused.get();
  ASSERT_FALSE(refusal.has_value());
  EXPECT_EQ(refusal.error().code, ErrorCode::kUnavailable) << refusal.error().message;
  EXPECT_EQ(milter_backend.Refused(), 1u);

  std::promise<std::expected<spamd::SpamdVerdict, Error>> held, queued, over;
  spamd_backend.ClassifyAsync(kSpam, {}, [&](auto v) { held.set_value(std::move(v)); });
  spamd_backend.ClassifyAsync(kSpam, {}, [&](auto v) { queued.set_value(std::move(v)); });
  spamd_backend.ClassifyAsync(kSpam, {}, [&](auto v) { over.set_value(std::move(v)); });
  auto spamd_refused = over.get_future();
  ASSERT_EQ(spamd_refused.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(spamd_refused.get().error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(spamd_backend.Refused(), 1u);

  store_->Open();
  for (auto* promise : {&first, &second}) {
    auto future = promise->get_future();
    const auto verdict = Wait(future);
    ASSERT_TRUE(verdict.has_value()) << "never answered";
    EXPECT_TRUE(verdict->has_value()) << verdict->error().message;
  }
  for (auto* promise : {&held, &queued}) {
    auto future = promise->get_future();
    const auto verdict = Wait(future);
    ASSERT_TRUE(verdict.has_value()) << "never answered";
    EXPECT_TRUE(verdict->has_value()) << verdict->error().message;
  }
}

TEST_F(AdapterTest, MilterAnswersANonStandardExceptionAsAnInternalError) {
  MilterCoreAdapter backend(*filter_, 1);
  store_->Arm(true);
  std::promise<std::expected<milter::MilterVerdict, Error>> answered;
  backend.ClassifyAsync(std::string(kSpam), {},
                        [&](auto verdict) { answered.set_value(std::move(verdict)); });
  auto future = answered.get_future();
  const auto verdict = Wait(future);
  ASSERT_TRUE(verdict.has_value()) << "never answered";
  ASSERT_FALSE(verdict->has_value());
  EXPECT_EQ(verdict->error().code, ErrorCode::kInternal);
  EXPECT_EQ(backend.Exceptions(), 1u);

  store_->Arm(false);  // And it serves on.
  std::promise<std::expected<milter::MilterVerdict, Error>> again;
  backend.ClassifyAsync(std::string(kSpam), {},
                        [&](auto verdict) { again.set_value(std::move(verdict)); });
  auto next = again.get_future();
  const auto served = Wait(next);
  ASSERT_TRUE(served.has_value()) << "never answered";
  ASSERT_TRUE(served->has_value()) << served->error().message;
  EXPECT_EQ((*served)->verdict, milter::MilterVerdict::Kind::kSpam);
}

TEST_F(AdapterTest, MilterNotesAThrowingAnswerAndServesOn) {
  MilterCoreAdapter backend(*filter_, 1);
  std::promise<void> threw;
  backend.ClassifyAsync(std::string(kHam), {}, [&](auto) {
    threw.set_value();
    throw "an answer that throws a string literal";
  });
  threw.get_future().wait();
  std::promise<std::expected<milter::MilterVerdict, Error>> again;
  backend.ClassifyAsync(std::string(kHam), {},
                        [&](auto verdict) { again.set_value(std::move(verdict)); });
  auto next = again.get_future();
  const auto served = Wait(next);
  ASSERT_TRUE(served.has_value()) << "never answered";
  EXPECT_TRUE(served->has_value());
  backend.Stop();
  EXPECT_EQ(backend.Exceptions(), 1u);
}

TEST_F(AdapterTest, SpamdAnswersANonStandardExceptionAndAThrowingAnswerIsNoted) {
  SpamdCoreAdapter backend(*filter_, 1);
  store_->Arm(true);
  std::promise<std::expected<spamd::SpamdVerdict, Error>> answered;
  backend.ClassifyAsync(kSpam, {}, [&](auto verdict) { answered.set_value(std::move(verdict)); });
  auto future = answered.get_future();
  const auto verdict = Wait(future);
  ASSERT_TRUE(verdict.has_value()) << "never answered";
  ASSERT_FALSE(verdict->has_value());
  EXPECT_EQ(verdict->error().code, ErrorCode::kInternal);

  store_->Arm(false);
  std::promise<void> threw;
  backend.ClassifyAsync(kSpam, {}, [&](auto) {
    threw.set_value();
    throw std::runtime_error("an answer that throws");
  });
  threw.get_future().wait();
  std::promise<std::expected<spamd::SpamdVerdict, Error>> again;
  backend.ClassifyAsync(kSpam, {}, [&](auto verdict) { again.set_value(std::move(verdict)); });
  auto next = again.get_future();
  const auto served = Wait(next);
  ASSERT_TRUE(served.has_value()) << "never answered";
  EXPECT_TRUE(served->has_value());
  backend.Stop();
  EXPECT_EQ(backend.Exceptions(), 2u);
}

TEST_F(AdapterTest, SpamdAnswersATellWhoseFeedbackHookThrows) {
  int hook_calls = 0;
  SpamdCoreAdapter backend(*filter_, 1, [&](core::Feedback) {
    ++hook_calls;
    throw 7;
  });
  constexpr std::string_view kNew = "Subject: winner\n\nwinner prize pills casino cheap free\n";
  std::promise<std::expected<spamd::SpamdVerdict, Error>> checked;
  backend.ClassifyAsync(kNew, {}, [&](auto verdict) { checked.set_value(std::move(verdict)); });
  auto check = checked.get_future();
  const auto verdict = Wait(check);  // Remembered: the TELL below is feedback on it.
  ASSERT_TRUE(verdict.has_value() && verdict->has_value());

  std::promise<std::expected<spamd::SpamdTellOutcome, Error>> told;
  backend.LearnAsync(kNew, spamd::SpamdLabel::kSpam, {},
                     [&](auto outcome) { told.set_value(std::move(outcome)); });
  auto tell = told.get_future();
  const auto outcome = Wait(tell);
  ASSERT_TRUE(outcome.has_value()) << "the TELL was never answered";
  ASSERT_TRUE(outcome->has_value()) << outcome->error().message;
  EXPECT_TRUE((*outcome)->changed);
  EXPECT_EQ(hook_calls, 1);
  backend.Stop();
  EXPECT_EQ(backend.Exceptions(), 1u);
}

TEST_F(AdapterTest, SpamdNotesAThrowingTellAnswer) {
  SpamdCoreAdapter backend(*filter_, 1);
  std::promise<void> threw;
  backend.LearnAsync(kHam, spamd::SpamdLabel::kHam, {}, [&](auto) {
    threw.set_value();
    throw 3.5;
  });
  ASSERT_EQ(threw.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::promise<std::expected<spamd::SpamdTellOutcome, Error>> told;
  backend.ForgetAsync(kHam, {}, [&](auto outcome) { told.set_value(std::move(outcome)); });
  auto tell = told.get_future();
  const auto outcome = Wait(tell);
  ASSERT_TRUE(outcome.has_value()) << "never answered";
  EXPECT_TRUE(outcome->has_value());
  backend.Stop();
  EXPECT_EQ(backend.Exceptions(), 1u);
}

TEST(FrontEndThreadTest, ANonStandardExceptionEscapingAHandlerIsNotedAndTheThreadServesOn) {
  FrontEndThread io("test");
  int on_exception = 0;
  io.Start([&] { ++on_exception; });
  boost::asio::post(io.context(), [] { throw 11; });
  std::promise<void> served;
  boost::asio::post(io.context(), [&] { served.set_value(); });
  auto future = served.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  io.Drain(std::chrono::seconds(0), [] { return std::size_t{0}; });
  EXPECT_EQ(io.Escaped(), 1u);
  EXPECT_EQ(on_exception, 1);
}

}  // namespace
}  // namespace nbspamd::server
