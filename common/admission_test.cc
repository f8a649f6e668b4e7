// Admission: requests and bytes in flight bounded, tickets give their place back, a lone large
// request passes, and the refusal is an immediate kUnavailable.
#include "common/admission.h"

#include <gtest/gtest.h>

#include <vector>

namespace nbspamd {
namespace {

TEST(AdmissionTest, RequestsAndBytesInFlightAreBoundedAndTicketsGiveTheirPlaceBack) {
  Admission admission({.max_requests = 2, .max_bytes = 100});
  std::vector<Admission::Ticket> held;
  auto first = admission.TryAdmit(60);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(admission.TryAdmit(50).has_value()) << "60 + 50 bytes is over 100";
  auto second = admission.TryAdmit(40);
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(admission.TryAdmit(0).has_value()) << "two requests in flight already";
  EXPECT_EQ(admission.InFlight(), 2u);
  EXPECT_EQ(admission.BytesInFlight(), 100u);
  EXPECT_EQ(admission.Refused(), 2u);
  first.reset();
  EXPECT_EQ(admission.InFlight(), 1u);
  EXPECT_EQ(admission.BytesInFlight(), 40u);
  EXPECT_TRUE(admission.TryAdmit(60).has_value());  // Its place, back.
  second.reset();
  // Alone, a request larger than the byte bound passes: the front end's size limit decides.
  auto large = admission.TryAdmit(1000);
  ASSERT_TRUE(large.has_value());
  held.push_back(std::move(*large));
  EXPECT_FALSE(admission.TryAdmit(1).has_value());
  held.clear();
  EXPECT_EQ(admission.InFlight(), 0u);
  EXPECT_EQ(admission.BytesInFlight(), 0u);
  const Error refusal = admission.Refusal("milter");
  EXPECT_EQ(refusal.code, ErrorCode::kUnavailable);
  EXPECT_NE(refusal.message.find("milter: overloaded"), std::string::npos) << refusal.message;
}

}  // namespace
}  // namespace nbspamd
