#include "common/handler_guard.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <stdexcept>

#include "common/log.h"

namespace nbspamd {
namespace {

namespace net = boost::asio;

TEST(HandlerGuardTest, AHandlerThatThrowsIsCountedAndTheThreadGoesOnServing) {
  net::io_context context;
  std::atomic<std::uint64_t> escaped = 0;
  int ran = 0;
  net::post(context, [&] { ++ran; });
  net::post(context, [] { throw std::runtime_error("a bug in a handler"); });
  net::post(context, [&] { ++ran; });
  net::post(context, [] { throw 42; });  // Not a std::exception.
  net::post(context, [&] { ++ran; });
  RunIoContext(context, escaped);  // Without the guard, the first throw would end the test.
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(escaped.load(), 2u);
}

TEST(HandlerGuardTest, RunReturnsWhenTheContextIsStopped) {
  net::io_context context;
  std::atomic<std::uint64_t> escaped = 0;
  auto work = net::make_work_guard(context);  // Would keep run() going forever.
  net::post(context, [&] { throw std::runtime_error("first"); });
  net::post(context, [&] { context.stop(); });
  RunIoContext(context, escaped);
  EXPECT_EQ(escaped.load(), 1u);
}

TEST(HandlerGuardTest, GuardStepReportsWhetherTheStepThrew) {
  std::atomic<std::uint64_t> count = 0;
  bool ran = false;
  EXPECT_TRUE(GuardStep("http connection", "r1", count, [&] { ran = true; }));
  EXPECT_TRUE(ran);
  EXPECT_EQ(count.load(), 0u);
  EXPECT_FALSE(GuardStep("http connection", "r2", count, [] { throw std::bad_alloc(); }));
  EXPECT_FALSE(GuardStep("http connection", "", count, [] { throw "a string"; }));
  EXPECT_EQ(count.load(), 2u);
}

TEST(HandlerGuardTest, DescribesTheExceptionInFlight) {
  try {
    throw std::runtime_error("disk on fire");
  } catch (...) {
    EXPECT_EQ(DescribeCurrentException(), "disk on fire");
  }
  try {
    throw 7;
  } catch (...) {
    EXPECT_EQ(DescribeCurrentException(), "unknown exception");
  }
}

}  // namespace
}  // namespace nbspamd
