#include "http_api/endpoints.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nbspamd::http_api {
namespace {

TEST(EndpointsTest, TargetsNameTheirEndpointWithoutTheQuery) {
  EXPECT_EQ(EndpointOf("/classify?explain=3"), Endpoint::kClassify);
  EXPECT_EQ(EndpointOf("/admin/rollback?source=mx1"), Endpoint::kAdminRollback);
  EXPECT_EQ(EndpointOf("/healthz"), Endpoint::kHealth);
  EXPECT_EQ(EndpointOf("/classify/"), Endpoint::kOther);
  EXPECT_EQ(EndpointOf("/nope"), Endpoint::kOther);
  EXPECT_EQ(EndpointName(Endpoint::kTrain), "/train");
  EXPECT_EQ(EndpointName(Endpoint::kOther), "other");
  EXPECT_EQ(SpecOf(Endpoint::kOther), nullptr);
}

TEST(EndpointsTest, AnIdSegmentMatchesAnyOneNonEmptySegment) {
  EXPECT_EQ(EndpointOf("/users/alice/stats"), Endpoint::kUserStats);
  EXPECT_EQ(EndpointOf("/users/a%2Fb/stats?x=1"), Endpoint::kUserStats);
  EXPECT_EQ(EndpointOf("/users/alice"), Endpoint::kUserDelete);
  EXPECT_EQ(EndpointOf("/users/"), Endpoint::kOther);
  EXPECT_EQ(EndpointOf("/users//stats"), Endpoint::kOther);
  EXPECT_EQ(EndpointOf("/users/alice/other"), Endpoint::kOther);
  EXPECT_EQ(EndpointOf("/users/alice/stats/more"), Endpoint::kOther);
  EXPECT_EQ(EndpointOf("/users"), Endpoint::kUserList);
  EXPECT_EQ(EndpointName(Endpoint::kUserStats), "/users/{id}/stats");
}

TEST(EndpointsTest, TheConsoleIsEveryPathUnderUi) {
  EXPECT_EQ(EndpointOf("/ui"), Endpoint::kConsole);
  EXPECT_EQ(EndpointOf("/ui/"), Endpoint::kConsole);
  EXPECT_EQ(EndpointOf("/ui/app.js?v=1"), Endpoint::kConsole);
  EXPECT_EQ(EndpointOf("/uix"), Endpoint::kOther);
  EXPECT_EQ(EndpointOf("/activity"), Endpoint::kActivity);
  EXPECT_EQ(EndpointOf("/calibration"), Endpoint::kCalibration);
  EXPECT_EQ(EndpointOf("/model/token?word=free"), Endpoint::kModelToken);
  EXPECT_EQ(EndpointOf("/model/strongest"), Endpoint::kModelStrongest);
  EXPECT_EQ(EndpointOf("/model/thresholds?spam=1&ham=0"), Endpoint::kModelThresholds);
  EXPECT_EQ(EndpointName(Endpoint::kConsole), "/ui/");
}

TEST(EndpointsTest, EachRowHasItsOwnPathAndOnlyHealthProbesSkipAdmission) {
  std::set<std::string> paths;
  for (const EndpointSpec& spec : kEndpoints) {
    EXPECT_TRUE(paths.insert(std::string(spec.path)).second) << spec.path;
    EXPECT_EQ(SpecOf(spec.endpoint), &spec);
    EXPECT_EQ(EndpointOfPath(spec.path), spec.endpoint);
    const bool probe = spec.endpoint == Endpoint::kHealth || spec.endpoint == Endpoint::kReady;
    EXPECT_EQ(spec.admitted, !probe) << spec.path;
    // Only training counts against the training rate, and only a token holder trains.
    if (spec.rate_limited) {
      EXPECT_EQ(spec.guard, Guard::kToken) << spec.path;
    }
  }
  EXPECT_EQ(paths.size() + 1, kEndpointCount);
}

}  // namespace
}  // namespace nbspamd::http_api
