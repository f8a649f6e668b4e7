#include "spamd/options.h"

#include <gtest/gtest.h>

namespace nbspamd::spamd {
namespace {

namespace ip = boost::asio::ip;

TEST(CheckTell, OffWithoutGrants) {
  const auto refused = CheckTell(SpamdTellPolicy{}, ip::make_address("127.0.0.1"), "root");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().status, SpamdStatus::kNoPerm);
  EXPECT_EQ(refused.error().message, "TELL commands are not enabled");
}

TEST(CheckTell, GrantWithNoListsAllowsAnyone) {
  SpamdTellPolicy policy;
  policy.grants.push_back(MakeTellGrant("anyone", {}, {}));
  EXPECT_EQ(CheckTell(policy, ip::make_address("192.0.2.7"), ""), "anyone");
  EXPECT_EQ(CheckTell(policy, std::nullopt, "x"), "anyone");
}

TEST(CheckTell, AddressList) {
  SpamdTellPolicy policy;
  policy.grants.push_back(
      MakeTellGrant("mx", {ip::make_address("127.0.0.1"), ip::make_address("2001:db8::5")}, {}));
  EXPECT_EQ(CheckTell(policy, ip::make_address("127.0.0.1"), "x"), "mx");
  EXPECT_EQ(CheckTell(policy, ip::make_address("::ffff:127.0.0.1"), "x"), "mx");
  EXPECT_EQ(CheckTell(policy, ip::make_address("2001:db8::5"), "x"), "mx");
  const auto other = CheckTell(policy, ip::make_address("127.0.0.2"), "x");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().status, SpamdStatus::kNoPerm);
  EXPECT_EQ(other.error().message, "TELL not allowed from this address");
  EXPECT_FALSE(CheckTell(policy, std::nullopt, "x").has_value());
}

TEST(CheckTell, UserList) {
  SpamdTellPolicy policy;
  policy.grants.push_back(MakeTellGrant("job", {}, {"trainer"}));
  EXPECT_EQ(CheckTell(policy, ip::make_address("10.0.0.1"), "trainer"), "job");
  const auto other = CheckTell(policy, ip::make_address("10.0.0.1"), "Trainer");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().message, "TELL not allowed for this user");
  EXPECT_FALSE(CheckTell(policy, ip::make_address("10.0.0.1"), "").has_value());
}

TEST(CheckTell, BothListsOfAGrantMustAgree) {
  SpamdTellPolicy policy;
  policy.grants.push_back(MakeTellGrant("mx", {ip::make_address("127.0.0.1")}, {"trainer"}));
  EXPECT_EQ(CheckTell(policy, ip::make_address("127.0.0.1"), "trainer"), "mx");
  EXPECT_FALSE(CheckTell(policy, ip::make_address("127.0.0.1"), "mallory").has_value());
  EXPECT_FALSE(CheckTell(policy, ip::make_address("10.1.1.1"), "trainer").has_value());
}

// Each grant is a source of its own, as each HTTP token is: the first that matches names it.
TEST(CheckTell, FirstMatchingGrantNamesTheSource) {
  SpamdTellPolicy policy;
  policy.grants.push_back(MakeTellGrant("mx1", {ip::make_address("192.0.2.1")}, {"sa-learn"}));
  policy.grants.push_back(MakeTellGrant("mx2", {ip::make_address("192.0.2.2")}, {}));
  policy.grants.push_back(MakeTellGrant("helpdesk", {}, {"helpdesk"}));
  EXPECT_EQ(CheckTell(policy, ip::make_address("192.0.2.1"), "sa-learn"), "mx1");
  EXPECT_EQ(CheckTell(policy, ip::make_address("192.0.2.2"), "sa-learn"), "mx2");
  EXPECT_EQ(CheckTell(policy, ip::make_address("192.0.2.1"), "helpdesk"), "helpdesk");
  EXPECT_FALSE(CheckTell(policy, ip::make_address("192.0.2.1"), "alice").has_value());
}

TEST(ValidateTellPolicy, SourceNamesAsTokenNames) {
  SpamdTellPolicy policy;
  EXPECT_TRUE(ValidateTellPolicy(policy).has_value());
  policy.grants.push_back(MakeTellGrant("mx-1.example_net", {}, {}));
  EXPECT_TRUE(ValidateTellPolicy(policy).has_value());
  for (const std::string& bad : std::vector<std::string>{
           "", "has space", "slash/", std::string(65, 'a'), "ünïcode", "autolearn"}) {
    SpamdTellPolicy one;
    one.grants.push_back(MakeTellGrant(bad, {}, {}));
    const auto invalid = ValidateTellPolicy(one);
    ASSERT_FALSE(invalid.has_value()) << bad;
    EXPECT_EQ(invalid.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  policy.grants.push_back(MakeTellGrant("mx-1.example_net", {}, {}));
  const auto duplicate = ValidateTellPolicy(policy);
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_EQ(duplicate.error().code, ErrorCode::kInvalidArgument);
}

TEST(ParseTellPolicy, EmptyTextIsTellOff) {
  for (const char* text : {"", "  \t"}) {
    const auto policy = ParseTellPolicy(text);
    ASSERT_TRUE(policy.has_value()) << text << ": " << policy.error().message;
    EXPECT_TRUE(policy->grants.empty()) << text;
  }
}

TEST(ParseTellPolicy, GrantsWithAddressesAndUsers) {
  const auto policy = ParseTellPolicy(
      "mx-learning from 192.0.2.25,2001:db8::25 users sa-learn,vmail;  local from 127.0.0.1;"
      " anyone ;");
  ASSERT_TRUE(policy.has_value()) << policy.error().message;
  ASSERT_EQ(policy->grants.size(), 3u);
  EXPECT_EQ(policy->grants[0].source, "mx-learning");
  EXPECT_EQ(policy->grants[0].addresses,
            (std::vector{ip::make_address("192.0.2.25"), ip::make_address("2001:db8::25")}));
  EXPECT_EQ(policy->grants[0].users, (std::vector<std::string>{"sa-learn", "vmail"}));
  EXPECT_EQ(policy->grants[1].source, "local");
  EXPECT_EQ(policy->grants[1].addresses, (std::vector{ip::make_address("127.0.0.1")}));
  EXPECT_TRUE(policy->grants[1].users.empty());
  EXPECT_EQ(policy->grants[2].source, "anyone");
  EXPECT_TRUE(policy->grants[2].addresses.empty());
  // The order of the words after the source does not matter.
  const auto reordered = ParseTellPolicy("mx users a from ::1");
  ASSERT_TRUE(reordered.has_value()) << reordered.error().message;
  EXPECT_EQ(reordered->grants[0].users, (std::vector<std::string>{"a"}));
  EXPECT_EQ(reordered->grants[0].addresses, (std::vector{ip::make_address("::1")}));
  EXPECT_EQ(CheckTell(*reordered, ip::make_address("::1"), "a"), "mx");
}

TEST(ParseTellPolicy, MistakesNameTheGrant) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"mx from", "spamd TELL grant 1: 'from' needs a list"},
      {"mx from localhost", "spamd TELL grant 1: 'localhost' is not a numeric IP address"},
      {"a; mx from 10.0.0.1,,10.0.0.2",
       "spamd TELL grant 2: an empty item in '10.0.0.1,,10.0.0.2'"},
      {"mx to 10.0.0.1", "spamd TELL grant 1: expected 'from' or 'users', not 'to'"},
      {"mx from ::1 from ::2", "spamd TELL grant 1: 'from' given twice"},
      {"mx users a users b", "spamd TELL grant 1: 'users' given twice"},
      {"a;;b", "spamd TELL grant 2: empty; write SOURCE [from ADDRESS,...] [users USER,...]"},
      {"bad/name",
       "spamd TELL grant 1: the source name must be 1-64 characters of A-Z a-z 0-9 _ . -"},
      {"mx; mx", "spamd TELL grants 1 and 2 have the same source name mx"},
  };
  for (const auto& c : cases) {
    const auto policy = ParseTellPolicy(c.text);
    ASSERT_FALSE(policy.has_value()) << c.text;
    EXPECT_EQ(policy.error().code, ErrorCode::kInvalidArgument) << c.text;
    EXPECT_EQ(policy.error().message, c.message) << c.text;
  }
}

}  // namespace
}  // namespace nbspamd::spamd
