#include "history/fact_policy.h"

#include <gtest/gtest.h>

namespace nbspamd::history {
namespace {

// The key 00 01 02 ... 1f.
FactKey Key() {
  FactKey key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<unsigned char>(i);
  return key;
}

TEST(FactPolicyTest, AHashedFactIsFoundByTheSameValueInAnotherCase) {
  const std::string hashed = HashedFact("Alice@Example.ORG", Key());
  EXPECT_EQ(hashed.size(), 17u);
  EXPECT_EQ(hashed.front(), '#');
  EXPECT_EQ(hashed, HashedFact("  alice@example.org\t", Key()));
  EXPECT_NE(hashed, HashedFact("bob@example.org", Key()));
}

// HMAC-SHA256 under the key: Python's hmac.new(bytes(range(32)), b"alice@example.org",
// hashlib.sha256).hexdigest()[:16]. Another key, another hash: a dictionary hashed without the
// key matches nothing.
TEST(FactPolicyTest, AHashIsKeyedAndTheKeysAreRandom) {
  EXPECT_EQ(HashedFact("alice@example.org", Key()), "#03a2cceef95fc1b3");
  const FactKey other = NewFactKey();
  EXPECT_NE(other, NewFactKey());
  EXPECT_NE(HashedFact("alice@example.org", other), HashedFact("alice@example.org", Key()));
}

// The tokens of a fact kept as a hash or not at all: hashed or hidden after their prefix; byte
// n-grams only in clear when every fact is kept. Python: hmac.new(key, b"watches", sha256).
TEST(FactPolicyTest, TokensOfAHiddenFactAreHiddenToo) {
  FactPolicies defaults;  // Subject and recipients hashed, as history_keep_* = "hash" keep them.
  defaults.subject = FactPolicy::kHash;
  defaults.recipients = FactPolicy::kHash;
  EXPECT_EQ(KeptTokenText("subject:Watches", TokenSource::kHeader, defaults, Key()),
            "subject:#1239548bae09ce0f");
  EXPECT_EQ(KeptTokenText("to:alice", TokenSource::kHeader, defaults, Key()),
            "to:" + HashedFact("alice", Key()));
  EXPECT_EQ(KeptTokenText("from-domain:example.org", TokenSource::kHeader, defaults, Key()),
            "from-domain:example.org");
  EXPECT_EQ(KeptTokenText("watches", TokenSource::kBody, defaults, Key()), "watches");
  FactPolicies off = defaults;
  off.subject = FactPolicy::kOff;
  EXPECT_EQ(KeptTokenText("subject:watches", TokenSource::kHeader, off, Key()), "subject:\u2026");
  EXPECT_EQ(KeptTokenText("b4:\"Subj\"", TokenSource::kByteNgram, defaults, Key()),
            "b4:" + HashedFact("\"Subj\"", Key()));
  const FactPolicies all_kept{.message_id = FactPolicy::kKeep,
                              .from_domain = FactPolicy::kKeep,
                              .subject = FactPolicy::kKeep,
                              .client = FactPolicy::kKeep,
                              .recipients = FactPolicy::kKeep};
  EXPECT_EQ(KeptTokenText("b4:\"Subj\"", TokenSource::kByteNgram, all_kept, Key()), "b4:\"Subj\"");
  EXPECT_EQ(KeptTokenText("subject:Watches", TokenSource::kHeader, all_kept, Key()),
            "subject:Watches");
}

TEST(FactPolicyTest, EachPolicyKeepsWhatItSays) {
  EXPECT_EQ(KeptFact("Cheap watches", FactPolicy::kKeep, Key()), "Cheap watches");
  EXPECT_EQ(KeptFact("Cheap watches", FactPolicy::kHash, Key()),
            HashedFact("cheap watches", Key()));
  EXPECT_EQ(KeptFact("Cheap watches", FactPolicy::kOff, Key()), "");
  EXPECT_EQ(KeptFact("", FactPolicy::kHash, Key()), "");  // Absent stays absent.
}

TEST(FactPolicyTest, AKeptFactIsValidUtf8AndCutAtACharacter) {
  EXPECT_EQ(KeptFact("caf\xC3", FactPolicy::kKeep, Key()), "caf\xEF\xBF\xBD");
  std::string long_text(511, 'a');
  long_text += "\xC3\xA9";  // é across the 512-byte cut.
  EXPECT_EQ(KeptFact(long_text, FactPolicy::kKeep, Key()), std::string(511, 'a'));
}

TEST(FactPolicyTest, PoliciesParseByName) {
  for (FactPolicy policy : {FactPolicy::kKeep, FactPolicy::kHash, FactPolicy::kOff}) {
    EXPECT_EQ(ParseFactPolicy(FactPolicyName(policy)), policy);
  }
  const auto bad = ParseFactPolicy("Keep");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

// Kept in clear by default, so that a word of them finds the scan; the history hashes them once
// older than its clear facts' bound (HashClearFacts).
TEST(FactPolicyTest, TheDefaultsKeepEveryFactInClear) {
  const ScanFacts kept = KeptFacts({.message_id = "a@b",
                                    .from_domain = "example.org",
                                    .subject = "Hello",
                                    .client = "192.0.2.1",
                                    .recipients = "alice@example.org"},
                                   FactPolicies{}, Key());
  EXPECT_EQ(kept.message_id, "a@b");
  EXPECT_EQ(kept.from_domain, "example.org");
  EXPECT_EQ(kept.subject, "Hello");
  EXPECT_EQ(kept.client, "192.0.2.1");
  EXPECT_EQ(kept.recipients, "alice@example.org");
}

TEST(FactPolicyTest, HashingClearFactsHashesSubjectSenderAndRecipientsOnce) {
  ScanFacts facts{.message_id = "a@b",
                  .from_domain = "example.org",
                  .subject = "Hello",
                  .client = "192.0.2.1",
                  .recipients = ""};
  EXPECT_TRUE(HashClearFacts(facts, Key()));
  EXPECT_EQ(facts.subject, HashedFact("Hello", Key()));
  EXPECT_EQ(facts.from_domain, HashedFact("example.org", Key()));
  EXPECT_EQ(facts.recipients, "");  // Absent stays absent.
  EXPECT_EQ(facts.message_id, "a@b");
  EXPECT_EQ(facts.client, "192.0.2.1");
  EXPECT_FALSE(HashClearFacts(facts, Key()));  // Hashed already: never hashed twice.
  EXPECT_EQ(HashedClearTokenText("subject:Watches", TokenSource::kHeader, Key()),
            "subject:#1239548bae09ce0f");
  EXPECT_EQ(HashedClearTokenText("subject:#1239548bae09ce0f", TokenSource::kHeader, Key()),
            "subject:#1239548bae09ce0f");
  EXPECT_EQ(HashedClearTokenText("subject:\u2026", TokenSource::kHeader, Key()), "subject:\u2026");
  EXPECT_EQ(HashedClearTokenText("watches", TokenSource::kBody, Key()), "watches");
  EXPECT_EQ(HashedClearTokenText("message-id-domain:example.org", TokenSource::kHeader, Key()),
            "message-id-domain:example.org");
}

}  // namespace
}  // namespace nbspamd::history
