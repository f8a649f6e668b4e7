#include "core/idle_users.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/memory_store.h"
#include "tests/support/test_time.h"

namespace nbspamd::core {
namespace {

using test_support::kDay;
using test_support::kNever;

class IdleUserSweepTest : public ::testing::Test {
 protected:
  IdleUserSweepTest() {
    SpamFilterOptions options;
    options.clock = [this] { return now_.load(); };
    filter_ = std::make_unique<SpamFilter>(std::make_unique<storage::MemoryStore>(), options);
  }

  void TrainAt(std::int64_t day, const std::string& user, const std::string& id,
               const std::string& label) {
    now_ = day * kDay;
    ASSERT_TRUE(filter_->Train("message " + id + " for " + user, label, id, user).has_value());
  }

  std::atomic<std::int64_t> now_{0};
  std::unique_ptr<SpamFilter> filter_;
};

TEST_F(IdleUserSweepTest, DropsOnlyTheLayersUntaughtForLongerThanTheIdleTime) {
  TrainAt(10, "alice", "a1", "spam");
  TrainAt(100, "alice", "a2", "ham");  // alice's newest: day 100.
  TrainAt(50, "bob", "b1", "spam");
  TrainAt(60, "carol", "c1", "ham");
  ASSERT_TRUE(filter_->ForgetId("c1", "carol").has_value());  // carol: no layer left.
  ASSERT_TRUE(filter_->Train("a global message", "spam", "g1").has_value());

  IdleUserSweep sweep(*filter_, std::chrono::days(30), kNever);
  now_ = 120 * kDay;  // bob idle 70 days, alice 20.
  auto dropped = sweep.SweepOnce();
  ASSERT_TRUE(dropped.has_value()) << dropped.error().message;
  EXPECT_EQ(*dropped, std::vector<std::string>{"bob"});
  EXPECT_FALSE(filter_->Users().UserStats("bob")->has_value());
  EXPECT_TRUE(filter_->Users().UserStats("alice")->has_value());
  EXPECT_EQ(filter_->Stats()->TotalDocuments(), 1u);  // The global model is not touched.

  now_ = 131 * kDay;  // alice idle 31 days.
  dropped = sweep.SweepOnce();
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(*dropped, std::vector<std::string>{"alice"});
  EXPECT_FALSE(filter_->Users().UserStats("alice")->has_value());
  EXPECT_TRUE(sweep.SweepOnce()->empty());
}

TEST_F(IdleUserSweepTest, ItsThreadSweepsEveryIntervalAndStopsWithIt) {
  TrainAt(1, "dave", "d1", "spam");
  now_ = 400 * kDay;
  {
    IdleUserSweep sweep(*filter_, std::chrono::days(30), std::chrono::milliseconds(10));
    for (int i = 0; i < 500 && filter_->Users().UserStats("dave")->has_value(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_FALSE(filter_->Users().UserStats("dave")->has_value());
}

}  // namespace
}  // namespace nbspamd::core
