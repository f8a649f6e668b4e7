#include "client/history_commands.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "client/daemon_answer.h"

namespace nbspamd::client {
namespace {

constexpr char kScan[] =
    R"({"scan_id":"01a227730dff8e610000","time_ms":1795958181375,"front_end":"milter",)"
    R"("user":null,"message_key":"<w-42@lists.example.org>","label":"spam","verdict":"spam",)"
    R"("score":2.32034,"spam_confidence":0.98,"size":5120,"tokens":412,)"
    R"("facts":{"message_id":"w-42@lists.example.org","from_domain":"lists.example.org",)"
    R"("subject":"#4f1d8c0a9b2e7d31","client":"192.0.2.10","recipients":null}})";

TEST(HistoryCommandsTest, AScanIsOneLineUnderTheHeader) {
  EXPECT_EQ(HistoryHeader(),
            "SCAN                  TIME (UTC)           VERDICT  SCORE    VIA     "
            "USER  FROM  MESSAGE-ID  SUBJECT\n");
  EXPECT_EQ(FormatScanLine(boost::json::parse(kScan)),
            "01a227730dff8e610000  2026-11-29 13:16:21  spam     +2.3203  milter  -  "
            "lists.example.org  w-42@lists.example.org  #4f1d8c0a9b2e7d31\n");
  // Missing score (nothing learned yet), a user, no facts at all.
  EXPECT_EQ(FormatScanLine(boost::json::parse(
                R"({"scan_id":"01a2","time_ms":0,"front_end":"http","user":"alice@example.org",)"
                R"("verdict":"unsure","score":null,"facts":{}})")),
            "01a2                  1970-01-01 00:00:00  unsure   -        http    "
            "alice@example.org  -  -  -\n");
}

TEST(HistoryCommandsTest, TextFromMailCannotDriveTheTerminal) {
  // A Message-ID with an escape sequence, a Subject with a newline, a C1 control (U+009B, CSI).
  const auto scan = boost::json::parse(
      R"({"scan_id":"01a2","time_ms":0,"verdict":"ham","score":-1,"front_end":"http",)"
      R"("facts":{"message_id":"\u001b[2Jgone@x","subject":"two\nlines \u009b1m"}})");
  const std::string line = FormatScanLine(scan);
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_NE(line.find("\\x1b[2Jgone@x"), std::string::npos) << line;
  EXPECT_NE(line.find("two\\x0alines \\x9b1m"), std::string::npos) << line;
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \x7f"), "caf\xc3\xa9 \\x7f");  // Other UTF-8 stays.
}

TEST(HistoryCommandsTest, AScanShowsItsSummaryFactsAndExplanation) {
  boost::json::value scan = boost::json::parse(kScan);
  scan.as_object()["bag_tokens"] = 250;
  scan.as_object()["explain"] = boost::json::parse(
      R"([{"token":"viagra","source":"body","count":2,"weight":3.1},)"
      R"({"token":"subject:lunch","source":"header","count":1,"weight":-0.25}])");
  EXPECT_EQ(FormatScan(scan),
            "scan 01a227730dff8e610000 at 2026-11-29 13:16:21 UTC, by milter, user -\n"
            "spam score=2.3203 confidence=0.9800 label=spam\n"
            "message <w-42@lists.example.org>: 5120 bytes, 412 tokens, 250 distinct\n"
            "from lists.example.org, message-id w-42@lists.example.org, subject "
            "#4f1d8c0a9b2e7d31, client 192.0.2.10, recipients -\n"
            "  +3.1000 body viagra x2\n"
            "  -0.2500 header subject:lunch x1\n");
}

// The learned state: learned, only checked (error-driven training), forgotten, never learned;
// nothing from a daemon whose answer has no such field (the test above).
TEST(HistoryCommandsTest, AScanSaysWhetherItWasLearnedOrOnlyChecked) {
  const auto learned_line = [](std::string_view learned) {
    boost::json::value scan = boost::json::parse(kScan);
    scan.as_object()["learned"] = boost::json::parse(learned);
    const std::string text = FormatScan(scan);
    const std::size_t recipients = text.find("recipients -\n");
    return text.substr(recipients + 13);
  };
  EXPECT_EQ(learned_line(R"({"state":"learned","as":"spam","at":"2026-12-05T03:04:05Z",)"
                         R"("at_ms":1,"how":"scan_id","by":"alice","changes":2})"),
            "learned as spam by alice at 2026-12-05 03:04:05 UTC (scan_id, 2 changes)\n");
  EXPECT_EQ(learned_line(R"({"state":"checked","as":"ham","at":"2026-12-05T03:04:05Z",)"
                         R"("at_ms":1,"how":"scan_header","by":null,"changes":1})"),
            "checked as ham at 2026-12-05 03:04:05 UTC (scan_header): already scored ham beyond "
            "train_margin, so recorded, not counted\n");
  EXPECT_EQ(learned_line(R"({"state":"forgotten","as":null,"at":"2026-12-05T03:04:05Z",)"
                         R"("at_ms":1,"how":"message_id","by":"bob","changes":3})"),
            "forgotten by bob at 2026-12-05 03:04:05 UTC (message_id, 3 changes)\n");
  EXPECT_EQ(learned_line("null"), "not learned\n");
  // A name from a bearer token cannot drive the terminal either.
  EXPECT_EQ(learned_line(R"({"state":"learned","as":"spam","at":"x","how":"scan_id",)"
                         R"("by":"\u001b[2J","changes":1})"),
            "learned as spam by \\x1b[2J at x (scan_id)\n");
}

TEST(HistoryCommandsTest, TheFiltersBecomeTheQuery) {
  ClientOptions options;
  EXPECT_EQ(HistoryQuery(options, 1'000'000'000), "");
  options.verdict = "spam";
  options.user = "a b@example.org";
  options.front_end = "milter";
  options.query = "example.org";
  options.since_seconds = 7200;
  EXPECT_EQ(
      HistoryQuery(options, 1'000'000'000),
      "?verdict=spam&user=a%20b%40example.org&front_end=milter&q=example.org&since=992800000");
}

}  // namespace
}  // namespace nbspamd::client
