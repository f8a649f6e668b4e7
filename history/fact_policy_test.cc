#include "history/fact_policy.h"

#include <gtest/gtest.h>

namespace nbspamd::history {
namespace {

TEST(FactPolicyTest, AHashedFactIsFoundByTheSameValueInAnotherCase) {
  const std::string hashed = HashedFact("Alice@Example.ORG");
  EXPECT_EQ(hashed.size(), 17u);
  EXPECT_EQ(hashed.front(), '#');
  EXPECT_EQ(hashed, HashedFact("  alice@example.org\t"));
  EXPECT_NE(hashed, HashedFact("bob@example.org"));
}

TEST(FactPolicyTest, EachPolicyKeepsWhatItSays) {
  EXPECT_EQ(KeptFact("Cheap watches", FactPolicy::kKeep), "Cheap watches");
  EXPECT_EQ(KeptFact("Cheap watches", FactPolicy::kHash), HashedFact("cheap watches"));
  EXPECT_EQ(KeptFact("Cheap watches", FactPolicy::kOff), "");
  EXPECT_EQ(KeptFact("", FactPolicy::kHash), "");  // Absent stays absent.
}

TEST(FactPolicyTest, AKeptFactIsValidUtf8AndCutAtACharacter) {
  EXPECT_EQ(KeptFact("caf\xC3", FactPolicy::kKeep), "caf\xEF\xBF\xBD");
  std::string long_text(511, 'a');
  long_text += "\xC3\xA9";  // é across the 512-byte cut.
  EXPECT_EQ(KeptFact(long_text, FactPolicy::kKeep), std::string(511, 'a'));
}

TEST(FactPolicyTest, PoliciesParseByName) {
  for (FactPolicy policy : {FactPolicy::kKeep, FactPolicy::kHash, FactPolicy::kOff}) {
    EXPECT_EQ(ParseFactPolicy(FactPolicyName(policy)), policy);
  }
  const auto bad = ParseFactPolicy("Keep");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

TEST(FactPolicyTest, TheDefaultsHashSubjectsAndRecipients) {
  const ScanFacts kept = KeptFacts({.message_id = "a@b",
                                    .from_domain = "example.org",
                                    .subject = "Hello",
                                    .client = "192.0.2.1",
                                    .recipients = "alice@example.org"},
                                   FactPolicies{});
  EXPECT_EQ(kept.message_id, "a@b");
  EXPECT_EQ(kept.from_domain, "example.org");
  EXPECT_EQ(kept.subject, HashedFact("Hello"));
  EXPECT_EQ(kept.client, "192.0.2.1");
  EXPECT_EQ(kept.recipients, HashedFact("alice@example.org"));
}

}  // namespace
}  // namespace nbspamd::history
