// The spamd-protocol front end of the real daemon (spamd_listen), driven by Debian's real spamc
// and by a throw-away Exim (tests/support/exim_instance.h), all on 127.0.0.1: the model is
// trained over HTTP, then spamc checks, reports and learns (TELL, as spamd_tell allows), and
// Exim's `spam =` ACL rejects trained spam. Feedback through TELL on an earlier CHECK reaches
// /metrics, and the daemon shuts down cleanly with the listener open.
//
// Needs Debian's spamc and, for Exim, root and exim4-daemon-heavy unpacked by
// scripts/install-deps; without them these tests fail rather than skip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/activity.h"
#include "tests/support/daemon_process.h"
#include "tests/support/exim_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/program_run.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
using ::testing::HasSubstr;

constexpr const char* kSpamc = "/usr/bin/spamc";

constexpr std::string_view kSpam =
    "From: sender@example.org\r\nTo: alice@example.org\r\nSubject: casino winner\r\n\r\n"
    "cheap pills, free money, casino prize now\r\n";
constexpr std::string_view kHam =
    "From: bob@example.org\r\nTo: alice@example.org\r\nSubject: agenda\r\n\r\n"
    "the team lunch meeting on friday, project report\r\n";

// The value of `sample` ("name{labels}") in a /metrics text, -1 when missing.
double MetricValue(const std::string& metrics, const std::string& sample) {
  const std::size_t at = metrics.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + sample.size() + 2));
}

class SpamdDaemonTest : public ::testing::Test {
 protected:
  void StartDaemon(const std::vector<std::string>& extra = {}) {
    ASSERT_TRUE(std::filesystem::exists(kSpamc))
        << kSpamc << " is missing: scripts/install-deps installs Debian's spamc";
    std::vector<std::string> args = {"--listen",         "127.0.0.1:0", "--data-dir",
                                     dir_.Join("model"), "--threads",   "2",
                                     "--spamd-listen",   "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto started = DaemonProcess::Start(args);
    ASSERT_TRUE(started.has_value()) << started.error();
    daemon_.emplace(std::move(*started));
    spamd_port_ = daemon_->LoggedPort("spamd listening on 127.0.0.1:").value_or(0);
    ASSERT_NE(spamd_port_, 0) << daemon_->Log();
  }

  void Train() {
    HttpClient client(daemon_->port());
    for (const char* spam :
         {"cheap pills prize winner casino", "free money click now winner casino",
          "winner winner cheap pills free prize", "casino bonus free money now click"}) {
      ASSERT_EQ(client.Send(http::verb::post, "/train?label=spam", spam).result(),
                http::status::ok);
    }
    for (const char* ham :
         {"lunch meeting agenda friday team", "project report for the team review",
          "minutes of the friday project meeting", "agenda for the review of the report"}) {
      ASSERT_EQ(client.Send(http::verb::post, "/train?label=ham", ham).result(), http::status::ok);
    }
  }

  std::string Get(const std::string& target) {
    HttpClient client(daemon_->port());
    return client.Send(http::verb::get, target, "").body();
  }

  // Runs spamc against the daemon's spamd listener, `input` on its standard input. -F /dev/null:
  // no spamc.conf on the machine changes its options.
  ProgramRun Spamc(std::vector<std::string> args, std::string_view input) {
    std::vector<std::string> argv = {
        kSpamc, "-F", "/dev/null", "-d", "127.0.0.1", "-p", std::to_string(spamd_port_),
        "-t",   "30"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProgramRun run = RunProgram(argv, input, dir_.path());
    if (run.exit_code == -1) ADD_FAILURE() << run.err;
    return run;
  }

  TempDir dir_;
  std::optional<DaemonProcess> daemon_;
  unsigned short spamd_port_ = 0;
};

// spamc -c prints "S/T" and exits 1 for spam, 0 for ham, scored by the daemon's own model;
// -R reports why.
TEST_F(SpamdDaemonTest, SpamcCheckAndReportScoreWithTheDaemonsModel) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(Train());

  const ProgramRun spam = Spamc({"-c"}, kSpam);
  EXPECT_EQ(spam.exit_code, 1) << spam.out << spam.err << daemon_->Log();
  EXPECT_THAT(spam.out, ::testing::MatchesRegex("[0-9]+\\.[0-9]/5\\.0\n"));
  EXPECT_GT(std::stod(spam.out), 5.0) << spam.out;

  const ProgramRun ham = Spamc({"-c"}, kHam);
  EXPECT_EQ(ham.exit_code, 0) << ham.out << ham.err;
  EXPECT_LT(std::stod(ham.out), 5.0) << ham.out;

  const ProgramRun report = Spamc({"-R"}, kSpam);
  EXPECT_EQ(report.exit_code, 0) << report.out << report.err;  // Only -c and -E exit 1 for spam.
  EXPECT_THAT(report.out, HasSubstr("has identified this message as spam"));
  EXPECT_THAT(report.out, HasSubstr("NBSPAMD_SPAM"));

  // spamc without -c gets the message back with the headers, the scan's id among them.
  const ProgramRun processed = Spamc({}, kHam);
  EXPECT_EQ(processed.exit_code, 0) << processed.out << processed.err;
  const std::size_t scan_at = processed.out.find("X-Spam-Scan-Id: ");
  ASSERT_NE(scan_at, std::string::npos) << processed.out;
  const std::string scan = Get("/history/" + processed.out.substr(scan_at + 16, 20));
  EXPECT_THAT(scan, HasSubstr("\"front_end\":\"spamd\"")) << scan;
  EXPECT_EQ(processed.out.find("; sig=", scan_at), scan_at + 16 + 20) << processed.out;
  // Every spamd check counts in the console's last hour (the three above and the one before).
  HttpClient http(daemon_->port());
  EXPECT_EQ(ClassifiedLastHour(http), 4);
  // The processed copy, reported, is that scan: its signed header holds for its body.
  const auto reported = http.Send(http::verb::post, "/train?label=ham", processed.out);
  ASSERT_EQ(reported.result(), http::status::ok) << reported.body();
  EXPECT_THAT(reported.body(), HasSubstr("\"scan_header\":\"matched\"")) << reported.body();

  const std::string metrics = Get("/metrics");
  EXPECT_EQ(MetricValue(metrics, "nbspamd_spamd_requests_answered_total"), 4) << metrics;
  EXPECT_EQ(MetricValue(metrics, "nbspamd_spamd_errors_total"), 0) << metrics;
}

// spamc -L learns through TELL under the grant's source name, seen in /admin/learned; a user the
// grant does not list is refused and nothing is learned; -L forget forgets; TELL on a message
// checked before counts as feedback in nbspamd_feedback_total.
TEST_F(SpamdDaemonTest, SpamcLearnsAsTheGrantAllowsAndItsFeedbackIsCounted) {
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon({"--spamd-tell", "mx-learning from 127.0.0.1 users trainer"}));
  ASSERT_NO_FATAL_FAILURE(Train());
  const std::string before = Get("/stats");

  // Checked first: the ham verdict is remembered under the message's content id.
  const std::string new_spam =
      "Subject: hello\r\n\r\nthe team meeting report: free money casino prize winner\r\n";
  const ProgramRun checked = Spamc({"-c"}, new_spam);
  ASSERT_TRUE(checked.exit_code == 0 || checked.exit_code == 1) << checked.out << checked.err;
  const bool checked_as_spam = checked.exit_code == 1;

  const ProgramRun refused = Spamc({"-L", "spam", "-u", "stranger"}, new_spam);
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_EQ(Get("/stats"), before) << "a refused TELL changed the model";

  const ProgramRun learned = Spamc({"-L", "spam", "-u", "trainer"}, new_spam);
  EXPECT_EQ(learned.exit_code, 0) << learned.out << learned.err << daemon_->Log();
  EXPECT_THAT(learned.out, HasSubstr("Message successfully un/learned"));
  const std::string listed = Get("/admin/learned?source=mx-learning");
  EXPECT_THAT(listed, HasSubstr("\"label\":\"spam\"")) << listed;

  const ProgramRun again = Spamc({"-L", "spam", "-u", "trainer"}, new_spam);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("Message was already un/learned"));

  const std::string metrics = Get("/metrics");
  EXPECT_EQ(
      MetricValue(metrics, checked_as_spam ? "nbspamd_feedback_total{kind=\"agreed\"}"
                                           : "nbspamd_feedback_total{kind=\"false_negative\"}"),
      1)
      << metrics;
  EXPECT_EQ(MetricValue(metrics, "nbspamd_spamd_tells_refused_total"), 1) << metrics;

  const ProgramRun forgot = Spamc({"-L", "forget", "-u", "trainer"}, new_spam);
  EXPECT_EQ(forgot.exit_code, 0) << forgot.out << forgot.err;
  EXPECT_THAT(forgot.out, HasSubstr("Message successfully un/learned"));
  EXPECT_EQ(Get("/stats"), before) << "forgetting did not restore the counts";
}

// A TELL of a message checked before marks its scan in the history: learned over spamd, by the
// grant's source name (docs/API.md, "Scan history").
TEST_F(SpamdDaemonTest, ATellMarksTheScanOfTheMessageItLearns) {
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon({"--spamd-tell", "mx-learning from 127.0.0.1 users trainer"}));
  ASSERT_NO_FATAL_FAILURE(Train());
  const std::string text = "Subject: hi\r\n\r\nthe project report: free casino prize\r\n";
  const ProgramRun checked = Spamc({"-c"}, text);
  ASSERT_TRUE(checked.exit_code == 0 || checked.exit_code == 1) << checked.out << checked.err;
  const ProgramRun learned = Spamc({"-L", "ham", "-u", "trainer"}, text);
  ASSERT_EQ(learned.exit_code, 0) << learned.out << learned.err << daemon_->Log();
  boost::json::value state;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {  // Marked by the history's writer, after the scans queued before.
    const boost::json::value page = boost::json::parse(Get("/history?front_end=spamd"));
    ASSERT_EQ(page.at("scans").as_array().size(), 1u) << page;
    state = page.at("scans").as_array()[0].at("learned");
    if (state.is_object()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("how").as_string(), "spamd");
  EXPECT_EQ(state.at("by").as_string(), "mx-learning");
  EXPECT_EQ(state.at("as").as_string(), "ham");
}

// With spamd_user_layers, the User header (spamc -u) names the user layer: TELL learns in it
// (and not in the global model), CHECK scores with it, and other users keep the global verdict.
// Header tokens are off and beta is 1 so that one learn decides alice's verdict.
TEST_F(SpamdDaemonTest, UserHeaderNamesTheUserLayerTellTrainsAndCheckScoresWith) {
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon({"--spamd-tell", "mx-learning from 127.0.0.1", "--spamd-user-layers", "true",
                   "--header-tokens", "false", "--user-beta", "1"}));
  ASSERT_NO_FATAL_FAILURE(Train());
  const std::string global_stats = Get("/stats");
  EXPECT_EQ(Spamc({"-c", "-u", "alice"}, kHam).exit_code, 0);

  const ProgramRun learned = Spamc({"-L", "spam", "-u", "alice"}, kHam);
  EXPECT_EQ(learned.exit_code, 0) << learned.out << learned.err << daemon_->Log();
  EXPECT_THAT(learned.out, HasSubstr("Message successfully un/learned"));
  EXPECT_EQ(Get("/stats"), global_stats) << "a user's TELL changed the global model";
  const std::string alice = Get("/users/alice/stats");
  EXPECT_THAT(alice, HasSubstr("{\"label\":\"spam\",\"documents\":1,")) << alice;

  const ProgramRun for_alice = Spamc({"-c", "-u", "alice"}, kHam);
  EXPECT_EQ(for_alice.exit_code, 1) << for_alice.out << for_alice.err;
  const ProgramRun for_bob = Spamc({"-c", "-u", "bob"}, kHam);
  EXPECT_EQ(for_bob.exit_code, 0) << for_bob.out << for_bob.err;

  // Forgetting through TELL empties alice's layer again: the global verdict is back.
  const ProgramRun forgot = Spamc({"-L", "forget", "-u", "alice"}, kHam);
  EXPECT_EQ(forgot.exit_code, 0) << forgot.out << forgot.err;
  EXPECT_EQ(Spamc({"-c", "-u", "alice"}, kHam).exit_code, 0);
  EXPECT_EQ(Get("/stats"), global_stats);
}

// Without spamd_tell nobody may train through the spamd protocol.
TEST_F(SpamdDaemonTest, TellIsOffByDefault) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(Train());
  const std::string before = Get("/stats");
  const ProgramRun refused = Spamc({"-L", "spam"}, kSpam);
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_EQ(Get("/stats"), before);
}

// Exim's `spam =` ACL (the one docs/SPAMD.md recommends) against the daemon: trained spam is
// rejected at SMTP time, ham accepted with its X-Spam-Score header.
TEST_F(SpamdDaemonTest, EximRejectsTrainedSpamAndAcceptsHam) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(Train());
  EximOptions options;
  options.spamd_port = spamd_port_;
  auto exim = EximInstance::Create(std::move(options));
  ASSERT_TRUE(exim.has_value()) << exim.error();

  const auto spam = exim->Submit(kSpam);
  ASSERT_TRUE(spam.has_value()) << spam.error();
  EXPECT_THAT(spam->data_reply, ::testing::StartsWith("550 rejected as spam (score "))
      << spam->transcript << daemon_->Log();

  const auto ham = exim->Submit(kHam);
  ASSERT_TRUE(ham.has_value()) << ham.error();
  EXPECT_THAT(ham->data_reply, ::testing::StartsWith("250 ")) << ham->transcript << exim->MainLog();
  const auto spooled = exim->Spooled(ham->message_id);
  ASSERT_TRUE(spooled.has_value()) << spooled.error();
  EXPECT_THAT(*spooled, HasSubstr("X-Spam-Score: -")) << *spooled;
}

// SIGTERM with the spamd listener open ends the daemon cleanly (exit 0), and a bad spamd_*
// setting stops start-up naming the key.
TEST_F(SpamdDaemonTest, ShutsDownCleanlyAndRefusesBadSettings) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(Train());
  EXPECT_EQ(Spamc({"-c"}, kSpam).exit_code, 1);
  EXPECT_EQ(daemon_->Terminate(), 0) << daemon_->Log();

  const ProcessExit bad_tell =
      RunToExit({"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("other"), "--spamd-listen",
                 "127.0.0.1:0", "--spamd-tell", "mx from mail.example.org"});
  EXPECT_EQ(bad_tell.status, 1) << bad_tell.output;
  EXPECT_THAT(bad_tell.output, HasSubstr("invalid value for 'spamd_tell'"));
  const ProcessExit bad_host = RunToExit({"--listen", "127.0.0.1:0", "--data-dir",
                                          dir_.Join("other"), "--spamd-listen", "localhost:0"});
  EXPECT_EQ(bad_host.status, 1) << bad_host.output;
  EXPECT_THAT(bad_host.output, HasSubstr("invalid value for 'spamd_listen'"));
}

}  // namespace
}  // namespace nbspamd::testing
