// Debian's real spamc (SpamAssassin 4.0) against a SpamdListener in this process, over TCP on
// 127.0.0.1, with the deterministic FakeSpamdBackend: "viagra" is spam. spamc runs as a
// subprocess with -F /dev/null, so no spamc.conf on the machine changes its options.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <thread>
#include <vector>

#include "spamd/listener.h"
#include "spamd/response.h"
#include "spamd/testing/fake_backend.h"
#include "spamd/testing/test_server.h"
#include "tests/support/program_run.h"

namespace nbspamd::spamd {
namespace {

namespace net = boost::asio;

constexpr std::string_view kSpam =
    "From: sender@example.org\r\nTo: alice@example.org\r\nSubject: cheap viagra\r\n"
    "X-Spam-Flag: NO\r\n\r\nBuy viagra now.\r\n";
constexpr std::string_view kHam =
    "From: bob@example.org\r\nTo: alice@example.org\r\nSubject: lunch\r\n\r\n"
    "Lunch at noon?\r\n";

struct SpamcRun {
  int exit_code = -1;
  std::string out;
};

class SpamcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(SPAMC_BINARY))
        << SPAMC_BINARY << " is missing: scripts/install-deps installs Debian's spamc";
    SpamdOptions options;
    options.tell.grants.push_back(
        MakeTellGrant("spamc-test", {net::ip::make_address("127.0.0.1")}, {"trainer"}));
    server_ = std::make_unique<SpamdTestServer>(backend_, options);
    SpamdOptions closed;  // TELL off: the default.
    closed_server_ = std::make_unique<SpamdTestServer>(backend_, closed);
    char dir[] = "/tmp/nbspamd-spamc-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    server_.reset();
    closed_server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Runs spamc with `args` against `port` (the TELL-enabled server by default), `input` on its
  // standard input.
  SpamcRun Spamc(std::vector<std::string> args, std::string_view input, unsigned short port = 0) {
    std::vector<std::string> argv = {SPAMC_BINARY,
                                     "-F",
                                     "/dev/null",
                                     "-d",
                                     "127.0.0.1",
                                     "-p",
                                     std::to_string(port ? port : server_->port()),
                                     "-t",
                                     "30"};
    argv.insert(argv.end(), args.begin(), args.end());
    const nbspamd::testing::ProgramRun ran = nbspamd::testing::RunProgram(argv, input, dir_);
    if (ran.exit_code == -1) ADD_FAILURE() << ran.err;
    last_stderr_ = ran.err;
    SpamcRun run;
    run.exit_code = ran.exit_code;
    run.out = ran.out;
    return run;
  }

  SpamdVerdict SpamVerdict() {
    SpamdVerdict verdict;
    verdict.score = 2.0;
    verdict.verdict = SpamdVerdictKind::kSpam;
    verdict.spam_confidence = 0.97;
    verdict.spam_threshold = 1.0;
    return verdict;
  }

  FakeSpamdBackend backend_;
  std::unique_ptr<SpamdTestServer> server_;
  std::unique_ptr<SpamdTestServer> closed_server_;
  std::filesystem::path dir_;
  std::string last_stderr_;
};

// spamc -c: "S/T" on stdout, exit code 1 for spam and 0 for ham.
TEST_F(SpamcTest, CheckPrintsScoreAndExitsOneForSpam) {
  const SpamcRun spam = Spamc({"-c"}, kSpam);
  EXPECT_EQ(spam.out, "10.0/5.0\n");
  EXPECT_EQ(spam.exit_code, 1) << last_stderr_;
  const SpamcRun ham = Spamc({"-c"}, kHam);
  EXPECT_EQ(ham.out, "-5.0/5.0\n");
  EXPECT_EQ(ham.exit_code, 0) << last_stderr_;
}

// spamc -R: the score line, then the report; exit code 0 (without -E).
TEST_F(SpamcTest, FullReport) {
  const SpamcRun run = Spamc({"-R"}, kSpam);
  EXPECT_EQ(run.exit_code, 0) << last_stderr_;
  EXPECT_EQ(run.out, "10.0/5.0\n" + ReportText(SpamVerdict()));
  EXPECT_NE(run.out.find("NBSPAMD_SPAM"), std::string::npos);
  // -E: exit code 1 for spam.
  EXPECT_EQ(Spamc({"-R", "-E"}, kSpam).exit_code, 1);
  EXPECT_EQ(Spamc({"-R", "-E"}, kHam).exit_code, 0);
}

// spamc -r: the report for spam only.
TEST_F(SpamcTest, ReportIfSpam) {
  const SpamcRun spam = Spamc({"-r"}, kSpam);
  EXPECT_EQ(spam.out, "10.0/5.0\n" + ReportText(SpamVerdict()));
  const SpamcRun ham = Spamc({"-r"}, kHam);
  EXPECT_EQ(ham.out, "");
  EXPECT_EQ(ham.exit_code, 0);
}

// spamc -y: the rule names, as spamd sends them from protocol 1.3 on (no line end).
TEST_F(SpamcTest, Symbols) {
  const SpamcRun spam = Spamc({"-y"}, kSpam);
  EXPECT_EQ(spam.out, "NBSPAMD_SPAM");
  EXPECT_EQ(Spamc({"-y"}, kHam).out, "NBSPAMD_HAM");
}

// spamc with no mode (PROCESS): the message comes back with nbspamd's headers, the forged
// X-Spam-Flag gone; --headers (HEADERS) gives the same message, spamc adding the body back.
TEST_F(SpamcTest, ProcessReturnsTheMarkedMessage) {
  const SpamcRun run = Spamc({}, kSpam);
  EXPECT_EQ(run.exit_code, 0) << last_stderr_;
  EXPECT_EQ(run.out, MarkMessage(kSpam, SpamVerdict()));
  EXPECT_NE(run.out.find("X-Spam-Flag: YES\r\n"), std::string::npos);
  EXPECT_EQ(run.out.find("X-Spam-Flag: NO"), std::string::npos);
  EXPECT_TRUE(run.out.ends_with("\r\n\r\nBuy viagra now.\r\n"));
  EXPECT_EQ(Spamc({"-E"}, kSpam).exit_code, 1);
  const SpamcRun headers = Spamc({"--headers"}, kSpam);
  EXPECT_EQ(headers.exit_code, 0) << last_stderr_;
  EXPECT_EQ(headers.out, run.out);
}

TEST_F(SpamcTest, UserReachesTheBackend) {
  EXPECT_EQ(Spamc({"-u", "alice", "-c"}, kHam).exit_code, 0);
  Spamc({"-c"}, kHam);  // spamc's default User: the Unix user running it.
  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].context.user, "alice");
  EXPECT_EQ(calls[0].message, kHam);
  const passwd* me = getpwuid(geteuid());
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(calls[1].context.user, me->pw_name);
}

TEST_F(SpamcTest, Ping) {
  const SpamcRun run = Spamc({"-K"}, "");
  EXPECT_EQ(run.exit_code, 0) << last_stderr_;
  EXPECT_EQ(run.out, "SPAMD/1.5 0\n");
  EXPECT_TRUE(backend_.Calls().empty());
}

// spamc -L spam|ham|forget (TELL): exit code 0 when learned or already learned.
TEST_F(SpamcTest, TellLearnsAndForgetsForAnAllowedUser) {
  SpamcRun run = Spamc({"-u", "trainer", "-L", "spam"}, kSpam);
  EXPECT_EQ(run.exit_code, 0) << last_stderr_;
  EXPECT_EQ(run.out, "Message successfully un/learned\n");
  run = Spamc({"-u", "trainer", "-L", "spam"}, kSpam);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "Message was already un/learned\n");
  run = Spamc({"-u", "trainer", "-L", "ham"}, kSpam);  // Relearned as the other class.
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "Message successfully un/learned\n");
  run = Spamc({"-u", "trainer", "-L", "forget"}, kSpam);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "Message successfully un/learned\n");
  run = Spamc({"-u", "trainer", "-L", "forget"}, kSpam);  // Nothing left to forget.
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "Message was already un/learned\n");

  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[0].operation, "learn");
  EXPECT_EQ(calls[0].label, SpamdLabel::kSpam);
  EXPECT_EQ(calls[0].message, kSpam);
  EXPECT_EQ(calls[0].context.user, "trainer");
  EXPECT_EQ(calls[0].context.source, "spamc-test");
  EXPECT_EQ(calls[2].operation, "learn");
  EXPECT_EQ(calls[2].label, SpamdLabel::kHam);
  EXPECT_EQ(calls[3].operation, "forget");
  EXPECT_EQ(calls[3].message, kSpam);
  EXPECT_EQ(calls[4].operation, "forget");
}

// A refused TELL: spamd's answer is the status line EX_NOPERM and the connection closes. spamc
// 4.0 does not read the code; it fails with EX_IOERR (74) as the headers never end.
TEST_F(SpamcTest, TellRefusedFails) {
  const SpamcRun other_user = Spamc({"-u", "mallory", "-L", "spam"}, kSpam);
  EXPECT_EQ(other_user.exit_code, 74) << other_user.out << last_stderr_;
  const SpamcRun disabled = Spamc({"-u", "trainer", "-L", "ham"}, kSpam, closed_server_->port());
  EXPECT_EQ(disabled.exit_code, 74) << disabled.out << last_stderr_;
  EXPECT_TRUE(backend_.Calls().empty());
}

// When nbspamd cannot classify, spamc's safe fallback passes the message through unchanged
// (exit 0); -c prints 0/0. With -x it exits with an error code instead.
TEST_F(SpamcTest, BackendFailureFallsBackSafely) {
  backend_.SetClassifyError(Error{ErrorCode::kFailedPrecondition, "nothing learned"});
  const SpamcRun process = Spamc({}, kSpam);
  EXPECT_EQ(process.exit_code, 0);
  EXPECT_EQ(process.out, kSpam);
  const SpamcRun check = Spamc({"-c"}, kSpam);
  EXPECT_EQ(check.out, "0/0\n");
  EXPECT_EQ(check.exit_code, 0);
  const SpamcRun strict = Spamc({"-x"}, kSpam);
  EXPECT_NE(strict.exit_code, 0);
}

}  // namespace
}  // namespace nbspamd::spamd
