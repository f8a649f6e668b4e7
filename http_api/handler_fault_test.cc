// A request whose handling throws, whatever it throws (a non-std exception too): the client gets
// one 500 JSON answer, the in-flight slot comes back, the fault is counted in /metrics, and the
// router serves the next request. Injected at the storage seam (a ForwardingStore whose Read
// throws).
#include <gtest/gtest.h>

#include <atomic>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <memory>
#include <string>

#include "http_api/router.h"
#include "storage/testing/forwarding_store.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;

// Reads throw `42` (an int: no std::exception) while `fail` is set.
class ThrowingStore : public storage::testing::ForwardingStore {
 public:
  explicit ThrowingStore(std::atomic<bool>& fail) : fail_(fail) {}
  model::Snapshot Read(std::span<const BagEntry> entries) const override {
    if (fail_.load()) throw 42;
    return ForwardingStore::Read(entries);
  }

 private:
  std::atomic<bool>& fail_;
};

TEST(HandlerFaultTest, ANonStdExceptionIsAnsweredOnceCountedAndReleasesItsSlot) {
  std::atomic<bool> fail = false;
  core::SpamFilter filter(std::make_unique<ThrowingStore>(fail), core::SpamFilterOptions{});
  RouterOptions options;
  options.max_in_flight = 2;
  Router router(filter, options);
  const auto classify = [&] {
    Request request(http::verb::post, "/classify", 11);
    request.set(http::field::content_type, "text/plain");
    request.body() = "cheap pills now";
    request.prepare_payload();
    return router.Handle(request);
  };
  fail = true;
  // More than max_in_flight of them: a leaked slot would turn the last ones into 503.
  for (int i = 0; i < 5; ++i) {
    const Response response = classify();
    EXPECT_EQ(response.result(), http::status::internal_server_error) << response.body();
    EXPECT_EQ(boost::json::parse(response.body()).at("error").at("code").as_string(), "internal");
    EXPECT_EQ(router.InFlight(), 0u);
  }
  EXPECT_EQ(router.metrics().HandlerExceptionCount(InternalError::kHttpConnection), 5u);
  fail = false;
  EXPECT_NE(classify().result(), http::status::internal_server_error);
}

}  // namespace
}  // namespace nbspamd::http_api
