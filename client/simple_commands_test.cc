#include "client/simple_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "client/http_connection.h"

namespace nbspamd::client {
namespace {

TEST(SimpleCommandsTest, FormatVerdictPrintsOneLineAndTheExplanations) {
  const auto answer = boost::json::parse(
      R"({"label":"spam","verdict":"spam","probability":0.99812,"log_odds":6.2,"score":0.41,)"
      R"("tokens":3,)"
      R"("explain":[{"token":"viagra","source":"body","count":2,"weight":3.1},)"
      R"({"token":"subject:lunch","source":"header","count":1,"weight":-0.25}]})");
  EXPECT_EQ(FormatVerdict(answer),
            "spam 0.9981 score=0.4100\n"
            "  +3.1000 body viagra x2\n"
            "  -0.2500 header subject:lunch x1\n");
}

TEST(SimpleCommandsTest, FormatVerdictShowsMissingNumbersAsDashes) {
  const auto answer = boost::json::parse(
      R"({"label":"spam","verdict":"unsure","probability":null,"log_odds":null,"score":null})");
  EXPECT_EQ(FormatVerdict(answer), "unsure - score=-\n");
}

TEST(SimpleCommandsTest, TheFirstWordIsTheVerdictNotTheLabel) {
  const auto answer = boost::json::parse(
      R"({"label":"ham","verdict":"unsure","probability":0.61,"log_odds":0.44,"score":0.021})");
  EXPECT_EQ(VerdictOf(answer), "unsure");
  EXPECT_EQ(FormatVerdict(answer), "unsure 0.6100 score=0.0210\n");
  // With a calibrated confidence, it follows; null (not enough feedback yet) shows nothing.
  const auto calibrated =
      boost::json::parse(R"({"label":"ham","verdict":"unsure","probability":0.9994,"score":0.0178,)"
                         R"("spam_confidence":0.85123})");
  EXPECT_EQ(FormatVerdict(calibrated), "unsure 0.9994 score=0.0178 confidence=0.8512\n");
  const auto uncalibrated = boost::json::parse(
      R"({"label":"ham","verdict":"ham","probability":0,"score":-0.5,"spam_confidence":null})");
  EXPECT_EQ(FormatVerdict(uncalibrated), "ham 0.0000 score=-0.5000\n");
  // A daemon from before the verdict: the label stands in for it.
  const auto old = boost::json::parse(R"({"label":"spam","probability":1,"score":0.3})");
  EXPECT_EQ(VerdictOf(old), "spam");
  EXPECT_EQ(FormatVerdict(old), "spam 1.0000 score=0.3000\n");
  EXPECT_EQ(VerdictOf(boost::json::parse("{}")), "-");
}

TEST(SimpleCommandsTest, FormatStatsListsClassesAndSettings) {
  const auto answer = boost::json::parse(
      R"({"classes":[{"label":"spam","documents":3,"tokens":30},{"label":"ham","documents":2,"tokens":12}],)"
      R"("documents":5,"vocabulary":40,"alpha":1.0,"spam_threshold":0.04,"ham_threshold":-0.5,)"
      R"("score_min_weight":1,"char_ngram_share":0.3,"train_margin":4,)"
      R"("verdict_thresholds":{"mode":"feedback","spam":0.04,"ham":-0.25,"feedback":{"spam":0.04,)"
      R"("ham":-0.25,"spam_from_feedback":false,"ham_from_feedback":true,"hams":12,"spams":1000,)"
      R"("window":1000}},)"
      R"("options":{"boolean_counts":true,"max_tokens":20000}})");
  EXPECT_EQ(FormatStats(answer),
            "documents: 5\n"
            "  spam: 3 documents, 30 tokens\n"
            "  ham: 2 documents, 12 tokens\n"
            "vocabulary: 40 distinct tokens\n"
            "alpha: 1\n"
            "spam_threshold: 0.04\n"
            "ham_threshold: -0.5\n"
            "score_min_weight: 1\n"
            "char_ngram_share: 0.3\n"
            "train_margin: 4\n"
            "verdict_thresholds: feedback, ham -0.25 / spam 0.04 in force; feedback gives ham "
            "-0.25 / spam 0.04 from 12 hams and 1000 spams (of 1000 each)\n"
            "tokenizer: boolean_counts=true max_tokens=20000\n");
  // Every message counted: said in words, not "null".
  auto counting = answer;
  counting.as_object()["train_margin"] = nullptr;
  EXPECT_THAT(FormatStats(counting),
              ::testing::HasSubstr("\ntrain_margin: none (every message counted)\n"));
}

TEST(SimpleCommandsTest, ErrorMessageTakesTheDaemonsMessage) {
  EXPECT_EQ(ErrorMessage({403, R"({"error":{"code":"forbidden","message":"unknown token"}})", 0}),
            "unknown token (HTTP 403)");
  EXPECT_EQ(ErrorMessage({502, "<html>", 0}), "the daemon answered HTTP 502");
}

TEST(SimpleCommandsTest, ParseServerAndPercentEncode) {
  auto server = ParseServer("127.0.0.1:7830");
  ASSERT_TRUE(server);
  EXPECT_EQ(server->host, "127.0.0.1");
  EXPECT_EQ(server->port, "7830");
  server = ParseServer("[::1]:80");
  ASSERT_TRUE(server);
  EXPECT_EQ(server->host, "::1");
  EXPECT_FALSE(ParseServer("localhost"));
  EXPECT_FALSE(ParseServer("localhost:0"));
  EXPECT_FALSE(ParseServer("localhost:70000"));
  EXPECT_FALSE(ParseServer(":80"));
  EXPECT_EQ(PercentEncode("<a b@c.d>"), "%3Ca%20b%40c.d%3E");
}

}  // namespace
}  // namespace nbspamd::client
