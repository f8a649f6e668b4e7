// contrib/postfix/nbspamd-filter, the Postfix content filter, run as Postfix's pipe(8) runs it:
// the message on standard input, the envelope in the arguments, reinjected through a stand-in
// sendmail that records what it was given. Real daemon, real nbspamc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using test_support::ReadFile;

class PostfixFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.Join("sendmail"))
        << "#!/bin/sh\nprintf '%s\\n' \"$*\" > \"$(dirname \"$0\")/args\"\n"
           "cat > \"$(dirname \"$0\")/delivered\"\n";
    std::system(("chmod +x " + dir_.Join("sendmail")).c_str());
  }

  // Runs the filter on `message` against the daemon on `port`; returns its exit status.
  int Filter(const std::string& message, unsigned short port, const std::string& extra_env = "") {
    std::ofstream(dir_.Join("in")) << message;
    std::remove(dir_.Join("delivered").c_str());
    const std::string command = "NBSPAMC=" + std::string(NBSPAMC_BINARY) +
                                " NBSPAMC_SERVER=127.0.0.1:" + std::to_string(port) +
                                " NBSPAMC_TIMEOUT=5 SENDMAIL=" + dir_.Join("sendmail") + " " +
                                extra_env + " " + NBSPAMD_FILTER_SCRIPT +
                                " -f sender@example.org -- rcpt@example.net < " + dir_.Join("in");
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  TempDir dir_;
};

TEST_F(PostfixFilterTest, AddsTheVerdictAndReinjectsTheMessageUnchanged) {
  auto started = DaemonProcess::Start(
      {"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("model"), "--threads", "2"});
  ASSERT_TRUE(started.has_value()) << started.error();
  DaemonProcess daemon = std::move(*started);
  HttpClient client(daemon.port());
  for (const char* spam : {"cheap pills prize winner", "free money click now winner"}) {
    client.Send(http::verb::post, "/train?label=spam", spam);
  }
  for (const char* ham : {"lunch meeting agenda friday", "project report for the team"}) {
    client.Send(http::verb::post, "/train?label=ham", ham);
  }
  const std::string spam = "Subject: you are a winner\n\ncheap pills, free money, click now\n";
  ASSERT_EQ(Filter(spam, daemon.port()), 0);
  std::string delivered = ReadFile(dir_.Join("delivered"));
  EXPECT_THAT(delivered, StartsWith("X-Spam-Flag: YES\nX-Nbspamd: spam "));
  EXPECT_THAT(delivered, HasSubstr("\n" + spam));
  EXPECT_EQ(ReadFile(dir_.Join("args")), "-G -i -f sender@example.org -- rcpt@example.net\n");

  const std::string ham = "Subject: agenda\n\nthe team lunch meeting on friday\n";
  ASSERT_EQ(Filter(ham, daemon.port()), 0);
  delivered = ReadFile(dir_.Join("delivered"));
  EXPECT_THAT(delivered, StartsWith("X-Nbspamd: ham "));
  EXPECT_THAT(delivered, Not(HasSubstr("X-Spam-Flag")));
  EXPECT_THAT(delivered, HasSubstr(ham));

  // Without a daemon: delivered unchecked, or left queued with tempfail.
  const unsigned short port = daemon.port();
  EXPECT_EQ(daemon.Terminate(), 0);
  ASSERT_EQ(Filter(ham, port), 0);
  EXPECT_THAT(ReadFile(dir_.Join("delivered")), StartsWith("X-Nbspamd: unavailable\n"));
  EXPECT_EQ(Filter(ham, port, "NBSPAMD_FAIL_MODE=tempfail"), 75);
}

TEST_F(PostfixFilterTest, AnUnsureMessageIsMarkedUnsureWithoutTheSpamFlag) {
  // Thresholds so wide that every message falls between them.
  auto started = DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("model"),
                                       "--threads", "2", "--ham-threshold", "-1000",
                                       "--spam-threshold", "1000"});
  ASSERT_TRUE(started.has_value()) << started.error();
  DaemonProcess daemon = std::move(*started);
  HttpClient client(daemon.port());
  client.Send(http::verb::post, "/train?label=spam", "cheap pills prize winner");
  client.Send(http::verb::post, "/train?label=ham", "lunch meeting agenda friday");
  for (const std::string message : {"Subject: you are a winner\n\ncheap pills\n",
                                    "Subject: agenda\n\nthe lunch meeting on friday\n"}) {
    ASSERT_EQ(Filter(message, daemon.port()), 0);
    const std::string delivered = ReadFile(dir_.Join("delivered"));
    EXPECT_THAT(delivered,
                ::testing::MatchesRegex(
                    "X-Nbspamd: unsure [0-9.]+ score=[0-9.-]+( confidence=[0-9.]+)?\n.*"));
    EXPECT_THAT(delivered, Not(HasSubstr("X-Spam-Flag")));
    EXPECT_THAT(delivered, HasSubstr("\n" + message));
  }
  EXPECT_EQ(daemon.Terminate(), 0);
}

}  // namespace
}  // namespace nbspamd::testing
