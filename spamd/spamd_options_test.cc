#include "spamd/spamd_options.h"

#include <gtest/gtest.h>

namespace nbspamd::spamd {
namespace {

namespace ip = boost::asio::ip;

TEST(CheckTell, OffByDefault) {
  const auto refused = CheckTell(SpamdTellPolicy{}, ip::make_address("127.0.0.1"), "root");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, SpamdStatus::kNoPerm);
}

TEST(CheckTell, EnabledWithNoListsAllowsAnyone) {
  SpamdTellPolicy policy;
  policy.enabled = true;
  EXPECT_FALSE(CheckTell(policy, ip::make_address("192.0.2.7"), "").has_value());
}

TEST(CheckTell, AddressList) {
  SpamdTellPolicy policy;
  policy.enabled = true;
  policy.allowed_addresses = {ip::make_address("127.0.0.1"), ip::make_address("2001:db8::5")};
  EXPECT_FALSE(CheckTell(policy, ip::make_address("127.0.0.1"), "x").has_value());
  EXPECT_FALSE(CheckTell(policy, ip::make_address("::ffff:127.0.0.1"), "x").has_value());
  EXPECT_FALSE(CheckTell(policy, ip::make_address("2001:db8::5"), "x").has_value());
  EXPECT_TRUE(CheckTell(policy, ip::make_address("127.0.0.2"), "x").has_value());
  EXPECT_TRUE(CheckTell(policy, std::nullopt, "x").has_value());
}

TEST(CheckTell, UserList) {
  SpamdTellPolicy policy;
  policy.enabled = true;
  policy.allowed_users = {"trainer"};
  EXPECT_FALSE(CheckTell(policy, ip::make_address("10.0.0.1"), "trainer").has_value());
  EXPECT_TRUE(CheckTell(policy, ip::make_address("10.0.0.1"), "Trainer").has_value());
  EXPECT_TRUE(CheckTell(policy, ip::make_address("10.0.0.1"), "").has_value());
}

TEST(CheckTell, BothListsMustAgree) {
  SpamdTellPolicy policy;
  policy.enabled = true;
  policy.allowed_addresses = {ip::make_address("127.0.0.1")};
  policy.allowed_users = {"trainer"};
  EXPECT_FALSE(CheckTell(policy, ip::make_address("127.0.0.1"), "trainer").has_value());
  EXPECT_TRUE(CheckTell(policy, ip::make_address("127.0.0.1"), "mallory").has_value());
  EXPECT_TRUE(CheckTell(policy, ip::make_address("10.1.1.1"), "trainer").has_value());
}

}  // namespace
}  // namespace nbspamd::spamd
