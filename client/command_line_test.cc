#include "client/command_line.h"

#include <gtest/gtest.h>

#include <map>

namespace nbspamd::client {
namespace {

std::expected<ParsedCommandLine, Error> Parse(std::vector<std::string> args,
                                              std::map<std::string, std::string> env = {}) {
  return ParseCommandLine(args, [&](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

TEST(CommandLineTest, DefaultsThenEnvironmentThenFlags) {
  auto parsed = Parse({"stats"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.server, "127.0.0.1:7830");
  EXPECT_EQ(parsed->options.timeout_seconds, 30);
  EXPECT_TRUE(parsed->options.token.empty());

  const std::map<std::string, std::string> env = {
      {"NBSPAMC_SERVER", "mx:1"}, {"NBSPAMC_TOKEN", "secret-from-env"}, {"NBSPAMC_TIMEOUT", "2.5"}};
  parsed = Parse({"stats"}, env);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->options.server, "mx:1");
  EXPECT_EQ(parsed->options.token, "secret-from-env");
  EXPECT_EQ(parsed->options.timeout_seconds, 2.5);

  parsed = Parse({"--server", "a:2", "stats", "--token", "flag-secret", "--timeout", "4"}, env);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.server, "a:2");
  EXPECT_EQ(parsed->options.token, "flag-secret");
  EXPECT_EQ(parsed->options.timeout_seconds, 4);
}

TEST(CommandLineTest, ParsesEachCommand) {
  auto parsed = Parse({"classify", "--json", "--explain", "5", "-"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.command, Command::kClassify);
  EXPECT_TRUE(parsed->options.json);
  EXPECT_EQ(parsed->options.explain, 5);
  EXPECT_EQ(parsed->options.paths, std::vector<std::string>{"-"});

  parsed = Parse({"train", "--label", "spam", "-j", "8", "a", "b"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.command, Command::kTrain);
  EXPECT_EQ(parsed->options.label, "spam");
  EXPECT_EQ(parsed->options.jobs, 8);
  EXPECT_EQ(parsed->options.paths, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(parsed->options.id);
  ASSERT_EQ(parsed->options.groups.size(), 1u);
  EXPECT_EQ(parsed->options.groups[0].paths, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(parsed->options.error_driven) << "an archive import by default";

  parsed = Parse({"train", "--label", "spam", "--error-driven", "--passes", "3", "a"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->options.error_driven);
  EXPECT_EQ(parsed->options.passes, 3);
  parsed = Parse({"train", "--label", "spam", "--count-all", "a"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_FALSE(parsed->options.error_driven) << "--count-all is the default";

  // Several labels: each with the PATHs after it; PATHs before the first belong to it.
  parsed = Parse({"train", "z", "--label", "spam", "a", "-j", "2", "b", "--label", "ham", "c"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.label, "spam");
  ASSERT_EQ(parsed->options.groups.size(), 2u);
  EXPECT_EQ(parsed->options.groups[0].label, "spam");
  EXPECT_EQ(parsed->options.groups[0].paths, (std::vector<std::string>{"z", "a", "b"}));
  EXPECT_EQ(parsed->options.groups[1].label, "ham");
  EXPECT_EQ(parsed->options.groups[1].paths, (std::vector<std::string>{"c"}));
  EXPECT_EQ(parsed->options.jobs, 2);
  EXPECT_EQ(parsed->options.paths, (std::vector<std::string>{"z", "a", "b", "c"}));

  parsed = Parse({"forget", "--id", "<x@y>"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.command, Command::kForget);
  EXPECT_EQ(parsed->options.id, "<x@y>");

  parsed = Parse({"train", "--label", "ham", "--scan-id", "01a2277612b48e610001"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.scan_id, "01a2277612b48e610001");
  EXPECT_TRUE(parsed->options.paths.empty());
  EXPECT_FALSE(parsed->options.id);
  parsed = Parse({"forget", "--scan-id", "01a2277612b48e610001"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.scan_id, "01a2277612b48e610001");

  parsed = Parse({"history", "--verdict", "spam", "--since", "90m", "--limit", "5", "--json"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.command, Command::kHistory);
  EXPECT_EQ(parsed->options.verdict, "spam");
  EXPECT_EQ(parsed->options.since_seconds, 5400);
  EXPECT_EQ(parsed->options.limit, 5);
  EXPECT_TRUE(parsed->options.json);
  EXPECT_FALSE(parsed->options.user);
  parsed = Parse({"history"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.limit, 20);
  EXPECT_FALSE(parsed->options.since_seconds);
  parsed = Parse({"scan", "01a2277612b48e610001"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.command, Command::kScan);
  EXPECT_EQ(parsed->options.paths, std::vector<std::string>{"01a2277612b48e610001"});

  parsed = Parse({"report", "--label", "ham", "--user", "alice@example.org"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.command, Command::kReport);
  EXPECT_EQ(parsed->options.label, "ham");
  EXPECT_EQ(parsed->options.user, "alice@example.org");
  EXPECT_FALSE(parsed->options.strict);
  EXPECT_EQ(parsed->options.paths, std::vector<std::string>{"-"});  // stdin by default
}

TEST(CommandLineTest, AReportWaitsBrieflyUnlessToldOtherwise) {
  auto parsed = Parse({"report", "--label", "spam"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.timeout_seconds, kReportTimeoutSeconds);
  EXPECT_FALSE(parsed->options.user);
  parsed = Parse({"report", "--label", "spam"}, {{"NBSPAMC_TIMEOUT", "12"}});
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->options.timeout_seconds, 12);
  parsed = Parse({"--timeout", "30", "report", "--label", "spam", "--strict", "file"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->options.timeout_seconds, 30);
  EXPECT_TRUE(parsed->options.strict);
  EXPECT_EQ(parsed->options.paths, std::vector<std::string>{"file"});
  parsed = Parse({"classify", "-"});  // Other commands keep theirs.
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->options.timeout_seconds, 30);
}

TEST(CommandLineTest, HelpAndVersion) {
  auto parsed = Parse({"--help"});
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->action, ParsedCommandLine::Action::kHelp);
  EXPECT_NE(parsed->help.find("--server"), std::string::npos);
  parsed = Parse({"train", "--help"});
  ASSERT_TRUE(parsed);
  EXPECT_NE(parsed->help.find("--label"), std::string::npos);
  parsed = Parse({"--version"});
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->action, ParsedCommandLine::Action::kVersion);
}

TEST(CommandLineTest, RejectsBadCommandLines) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"stats", "--bogus"},
      {"stats", "extra"},
      {"classify"},
      {"classify", "a", "b"},
      {"classify", "--explain", "1001", "-"},
      {"train", "dir"},
      {"train", "--label", "spam"},
      {"train", "--label", "spam", "--jobs", "0", "dir"},
      {"train", "--label", "spam", "--id", "x", "a", "b"},
      {"train", "--label", "spam", "a", "--label", "ham"},  // ham has no PATH.
      {"train", "--label", "spam", "--passes", "2", "a"},   // Passes are for --error-driven.
      {"train", "--label", "spam", "--error-driven", "--count-all", "a"},
      {"train", "--label", "spam", "a", "--label", "ham", "b", "--id", "x"},
      {"forget", "--id", "x", "path"},
      {"train", "--scan-id", "s"},  // No --label.
      {"train", "--label", "spam", "--scan-id", "s", "path"},
      {"train", "--label", "spam", "--scan-id", "s", "--id", "x"},
      {"forget", "--scan-id", "s", "path"},
      {"forget", "--scan-id", ""},
      {"classify", "--scan-id", "s", "-"},
      {"history", "extra"},
      {"history", "--verdict", "maybe"},
      {"history", "--front-end", "smtp"},
      {"history", "--limit", "0"},
      {"history", "--limit", "100001"},
      {"history", "--since", "2w"},
      {"history", "--since", "h"},
      {"history", "--since", "0h"},
      {"history", "--since", "-2h"},
      {"history", "--user", ""},
      {"history", "--query", ""},
      {"history", "--label", "spam"},
      {"scan"},
      {"scan", "a", "b"},
      {"forget"},
      {"stats", "--timeout", "0"},
      {"stats", "--timeout", "soon"},
      {"classify", "--label", "spam", "-"},  // A flag of another command.
      {"report"},
      {"report", "--label", "spam", "a", "b"},
      {"report", "--label", "spam", "--user", ""},
      {"report", "--label", "spam", "--jobs", "2"},
  };
  for (const auto& args : bad) {
    const auto parsed = Parse(args);
    EXPECT_FALSE(parsed) << ::testing::PrintToString(args);
    if (!parsed) {
      EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    }
  }
  const auto parsed = Parse({"stats"}, {{"NBSPAMC_TIMEOUT", "x"}});
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("NBSPAMC_TIMEOUT"), std::string::npos);
}

}  // namespace
}  // namespace nbspamd::client
