#include "history/scan_query.h"

#include <gtest/gtest.h>

#include "history/fact_policy.h"

namespace nbspamd::history {
namespace {

const FactKey kKey{};  // Any key: the same on both sides.

ScanSummary Newsletter() {
  return {.scan_id = "018bcfe5680012340000",
          .front_end = "milter",
          .user = "alice",
          .message_key = "<news-42@lists.example.org>",
          .verdict = "spam",
          .facts = {.message_id = "news-42@lists.example.org",
                    .from_domain = "Lists.Example.org",
                    .subject = HashedFact("Our November newsletter", kKey),
                    .recipients = ""}};
}

bool Match(const ScanQuery& query, const ScanSummary& summary) {
  return Matches(query, HashedFact(query.text, kKey), summary);
}

TEST(ScanQueryTest, EachFilterMustHold) {
  const ScanSummary scan = Newsletter();
  EXPECT_TRUE(Match({}, scan));
  EXPECT_TRUE(Match({.verdict = "spam", .user = "alice", .front_end = "milter"}, scan));
  EXPECT_FALSE(Match({.verdict = "ham"}, scan));
  EXPECT_FALSE(Match({.user = ""}, scan));  // The global model's scans only.
  EXPECT_FALSE(Match({.front_end = "http"}, scan));
}

TEST(ScanQueryTest, TextMatchesAKeptFactInAnyCaseAndAHashedOneOnlyWhole) {
  const ScanSummary scan = Newsletter();
  EXPECT_TRUE(Match({.text = "example.ORG"}, scan));
  EXPECT_TRUE(Match({.text = "our november NEWSLETTER"}, scan));  // The hashed subject, whole.
  EXPECT_FALSE(Match({.text = "november"}, scan));                // A part of it: no.
  EXPECT_TRUE(Match({.text = "018bcfe5680012340000"}, scan));     // The scan id.
  EXPECT_FALSE(Match({.text = "watches"}, scan));
}

TEST(ScanQueryTest, AKeptTextThatLooksLikeAHashIsStillText) {
  ScanSummary scan = Newsletter();
  scan.facts.subject = "#1 deal";
  EXPECT_TRUE(Match({.text = "#1"}, scan));
}

}  // namespace
}  // namespace nbspamd::history
