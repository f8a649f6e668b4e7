// The milter front end of the real daemon behind a throw-away Postfix (milter/testing/
// postfix_instance.h): the model is trained over HTTP, then mail goes in over SMTP on 127.0.0.1.
// Trained spam is rejected at SMTP time with the configured 550, ham is delivered with the
// X-Nbspamd header, feedback by Message-ID over /train reaches /metrics, and with the daemon
// stopped Postfix's milter_default_action decides. A daemon that has learned nothing answers
// 4xx with milter_fail_mode = tempfail.
//
// Needs root and Debian's postfix package (scripts/install-deps installs it); without them these
// tests fail rather than skip, so that CI cannot pass without running them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "milter/testing/postfix_instance.h"
#include "milter/testing/smtp_client.h"
#include "tests/support/activity.h"
#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using milter::testing::PostfixInstance;
using milter::testing::PostfixOptions;
using milter::testing::SendMail;
using milter::testing::SmtpEnvelope;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kRejectText = "Spam is not welcome here";

const SmtpEnvelope kEnvelope{.sender = "sender@example.org",
                             .recipients = {"user@nbspamd.test"},
                             .helo = "client.example.org"};

std::string Message(const std::string& name, const std::string& subject, const std::string& body) {
  return "From: sender@example.org\r\nTo: user@nbspamd.test\r\nSubject: " + subject +
         "\r\nMessage-ID: <" + name + "@example.org>\r\n\r\n" + body + "\r\n";
}

// The value of `sample` ("name{labels}") in a /metrics text, -1 when missing.
double MetricValue(const std::string& metrics, const std::string& sample) {
  const std::size_t at = metrics.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + sample.size() + 2));
}

class MilterDaemonTest : public ::testing::Test {
 protected:
  void StartDaemon(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--listen",         "127.0.0.1:0",     "--data-dir",
                                     dir_.Join("model"), "--threads",       "2",
                                     "--milter-listen",  "inet:127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto started = DaemonProcess::Start(args);
    ASSERT_TRUE(started.has_value()) << started.error();
    daemon_.emplace(std::move(*started));
    const auto port = daemon_->LoggedPort("milter listening on inet:127.0.0.1:");
    ASSERT_TRUE(port.has_value()) << daemon_->Log();
    milter_port_ = *port;
  }

  void StartPostfix(const std::string& default_action) {
    PostfixOptions options;
    options.milter = "inet:127.0.0.1:" + std::to_string(milter_port_);
    options.milter_default_action = default_action;
    auto postfix = PostfixInstance::Start(options);
    ASSERT_TRUE(postfix.has_value()) << postfix.error().message;
    postfix_ = std::move(*postfix);
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

  ~MilterDaemonTest() override {
    postfix_.reset();  // Postfix first: it may still be talking to the daemon.
    daemon_.reset();
  }

  TempDir dir_;
  std::optional<DaemonProcess> daemon_;
  unsigned milter_port_ = 0;
  std::unique_ptr<PostfixInstance> postfix_;
};

TEST_F(MilterDaemonTest, RejectsTrainedSpamDeliversHamAndCountsFeedbackByMessageId) {
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon({"--milter-reject-score", "1", "--milter-reject-text", kRejectText}));
  ASSERT_NO_FATAL_FAILURE(Train());
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));

  auto spam = SendMail(postfix_->smtp_port(), kEnvelope,
                       Message("spam1", "winner", "cheap pills, free money, casino prize now"));
  ASSERT_TRUE(spam.has_value()) << spam.error().message;
  EXPECT_EQ(spam->reply.code, 550) << postfix_->LogTail();
  EXPECT_EQ(spam->stage, "END");
  EXPECT_THAT(spam->reply.text, HasSubstr("5.7.1 " + std::string(kRejectText)));

  auto ham =
      SendMail(postfix_->smtp_port(), kEnvelope,
               Message("ham1", "agenda", "the team lunch meeting on friday, project report"));
  ASSERT_TRUE(ham.has_value()) << ham.error().message;
  EXPECT_EQ(ham->reply.code, 250) << postfix_->LogTail();
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 1u);
  EXPECT_THAT(delivered->front(), HasSubstr("X-Nbspamd: ham "));
  EXPECT_THAT(delivered->front(), Not(HasSubstr("X-Spam-Flag")));
  // The status header names the scan; the history has it as the milter's, with the client.
  const std::string& mail = delivered->front();
  const std::size_t scan_at = mail.find(" scan=");
  ASSERT_NE(scan_at, std::string::npos) << mail;
  const std::string scan_id = mail.substr(scan_at + 6, 20);
  EXPECT_EQ(mail.find(" sig=", scan_at), scan_at + 6 + 20) << mail;  // The header's signature.
  {
    HttpClient history(daemon_->port());
    const auto scan = history.Send(http::verb::get, "/history/" + scan_id);
    ASSERT_EQ(scan.result(), http::status::ok) << scan.body();
    const json::value found = json::parse(scan.body());
    EXPECT_EQ(found.at("front_end").as_string(), "milter");
    EXPECT_EQ(found.at("verdict").as_string(), "ham");
    EXPECT_EQ(found.at("facts").at("client").as_string(), "127.0.0.1") << scan.body();
    EXPECT_EQ(history.GetJson("/history?front_end=milter").at("scans").as_array().size(), 2u);
    // Every scan counts in the console's last hour too.
    EXPECT_EQ(ClassifiedLastHour(history),
              static_cast<std::int64_t>(history.GetJson("/history").at("scans").as_array().size()));
  }

  // The user says the delivered message was spam: /train under its Message-ID is a false
  // negative of the verdict the milter gave.
  HttpClient client(daemon_->port());
  const std::string before = client.Send(http::verb::get, "/metrics").body();
  const double false_negatives =
      MetricValue(before, "nbspamd_feedback_total{kind=\"false_negative\"}");
  ASSERT_GE(false_negatives, 0) << before;
  ASSERT_EQ(client
                .Send(http::verb::post, "/train?label=spam&id=%3Cham1@example.org%3E",
                      Message("ham1", "agenda", "the team lunch meeting on friday, project report"))
                .result(),
            http::status::ok);
  const std::string after = client.Send(http::verb::get, "/metrics").body();
  EXPECT_EQ(MetricValue(after, "nbspamd_feedback_total{kind=\"false_negative\"}"),
            false_negatives + 1)
      << after;
  EXPECT_EQ(MetricValue(after, "nbspamd_milter_actions_total{action=\"reject\"}"), 1) << after;
  EXPECT_EQ(MetricValue(after, "nbspamd_milter_messages_total{verdict=\"ham\"}"), 1) << after;

  // With the daemon stopped, Postfix's milter_default_action = accept delivers: nothing is lost.
  postfix_.reset();
  ASSERT_EQ(daemon_->Terminate(), 0) << daemon_->Log();
  ASSERT_NO_FATAL_FAILURE(StartPostfix("accept"));
  auto unchecked = SendMail(postfix_->smtp_port(), kEnvelope,
                            Message("spam2", "winner", "cheap pills, free money, casino prize"));
  ASSERT_TRUE(unchecked.has_value()) << unchecked.error().message;
  EXPECT_EQ(unchecked->reply.code, 250) << postfix_->LogTail();
  auto accepted = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(accepted.has_value()) << accepted.error().message;
  EXPECT_THAT(accepted->front(), Not(HasSubstr("X-Nbspamd")));
}

TEST_F(MilterDaemonTest, NothingLearnedWithTempfailModeAnswers4xx) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon({"--milter-fail-mode", "tempfail"}));
  ASSERT_NO_FATAL_FAILURE(StartPostfix("accept"));
  auto outcome =
      SendMail(postfix_->smtp_port(), kEnvelope, Message("first", "hello", "a first message"));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(outcome->reply.code / 100, 4) << postfix_->LogTail();
  HttpClient client(daemon_->port());
  const std::string metrics = client.Send(http::verb::get, "/metrics").body();
  EXPECT_EQ(MetricValue(metrics, "nbspamd_milter_actions_total{action=\"tempfail\"}"), 1)
      << metrics;
}

TEST_F(MilterDaemonTest, ServesPostfixOnAUnixSocketWithTheConfiguredMode) {
  // Postfix's smtpd runs as the postfix user: it must reach the socket's folder.
  std::filesystem::permissions(dir_.path(), std::filesystem::perms(0755));
  const std::string socket = dir_.Join("milter.sock");
  std::vector<std::string> args = {
      "--listen",        "127.0.0.1:0",    "--data-dir",           dir_.Join("model"),
      "--milter-listen", "unix:" + socket, "--milter-socket-mode", "0666"};
  auto started = DaemonProcess::Start(args);
  ASSERT_TRUE(started.has_value()) << started.error();
  daemon_.emplace(std::move(*started));
  struct stat status {};
  ASSERT_EQ(stat(socket.c_str(), &status), 0) << daemon_->Log();
  EXPECT_TRUE(S_ISSOCK(status.st_mode));
  EXPECT_EQ(status.st_mode & 0777, 0666u);
  ASSERT_NO_FATAL_FAILURE(Train());

  PostfixOptions options;
  options.milter = "unix:" + socket;
  options.milter_default_action = "tempfail";
  auto postfix = PostfixInstance::Start(options);
  ASSERT_TRUE(postfix.has_value()) << postfix.error().message;
  postfix_ = std::move(*postfix);
  auto ham = SendMail(postfix_->smtp_port(), kEnvelope,
                      Message("ham2", "agenda", "the project report for the friday review"));
  ASSERT_TRUE(ham.has_value()) << ham.error().message;
  EXPECT_EQ(ham->reply.code, 250) << postfix_->LogTail();
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  EXPECT_THAT(delivered->front(), HasSubstr("X-Nbspamd: ham "));

  // SIGTERM removes the socket file and ends the daemon cleanly.
  postfix_.reset();
  EXPECT_EQ(daemon_->Terminate(), 0) << daemon_->Log();
  EXPECT_FALSE(std::filesystem::exists(socket));
}

// With milter_user_layers, a message for one recipient is scored with that recipient's user
// layer (the address lowercased): a message the global model calls ham, learned as spam in
// alice's layer, is rejected for Alice and delivered to bob, and to both when it is for both
// (one verdict for several recipients: the global model's). Header tokens are off and beta is 1
// so that the layer is all alice's evidence: the message as Postfix passes it (with its Received
// field) has exactly the body words alice's layer learned.
TEST_F(MilterDaemonTest, OneRecipientsUserLayerDecidesItsVerdict) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon({"--milter-reject-score", "1", "--milter-reject-text",
                                       kRejectText, "--milter-user-layers", "true",
                                       "--header-tokens", "false", "--user-beta", "1"}));
  ASSERT_NO_FATAL_FAILURE(Train());
  const std::string newsletter =
      Message("news1", "newsletter", "the team lunch meeting on friday, project report");
  HttpClient client(daemon_->port());
  const auto learned =
      client.Send(http::verb::post, "/train?label=spam&user=alice%40nbspamd.test", newsletter);
  ASSERT_EQ(learned.result(), http::status::ok) << learned.body();
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));

  const SmtpEnvelope to_alice{.sender = "sender@example.org",
                              .recipients = {"Alice@NBSPAMD.test"},
                              .helo = "client.example.org"};
  auto for_alice = SendMail(postfix_->smtp_port(), to_alice, newsletter);
  ASSERT_TRUE(for_alice.has_value()) << for_alice.error().message;
  EXPECT_EQ(for_alice->reply.code, 550) << postfix_->LogTail() << daemon_->Log();

  const SmtpEnvelope to_bob{.sender = "sender@example.org",
                            .recipients = {"bob@nbspamd.test"},
                            .helo = "client.example.org"};
  auto for_bob = SendMail(postfix_->smtp_port(), to_bob, newsletter);
  ASSERT_TRUE(for_bob.has_value()) << for_bob.error().message;
  EXPECT_EQ(for_bob->reply.code, 250) << postfix_->LogTail();

  const SmtpEnvelope to_both{.sender = "sender@example.org",
                             .recipients = {"alice@nbspamd.test", "bob@nbspamd.test"},
                             .helo = "client.example.org"};
  auto for_both = SendMail(postfix_->smtp_port(), to_both, newsletter);
  ASSERT_TRUE(for_both.has_value()) << for_both.error().message;
  EXPECT_EQ(for_both->reply.code, 250) << postfix_->LogTail();

  auto delivered = postfix_->WaitForDelivery(3);  // bob's, then one for each of both.
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 3u);
  for (const std::string& message : *delivered) {
    EXPECT_THAT(message, HasSubstr("X-Nbspamd: ham ")) << message;
  }
}

// Bad milter settings are start-up errors naming the key (exit 1), as for every other key.
TEST(MilterSettingsTest, BadValuesAreStartUpErrorsNamingTheKey) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--milter-listen", "inet:nowhere"}, "milter_listen"},
      {{"--milter-listen", "inet:127.0.0.1:0", "--milter-flag-header", "Bad Header"},
       "milter_flag_header"},
      {{"--milter-listen", "inet:127.0.0.1:0", "--milter-socket-group", "no-such-group-x"},
       "milter_socket_group"},
  };
  for (const auto& [flags, key] : cases) {
    std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--data-dir", dir.Join("model")};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessExit exit = RunToExit(args);
    EXPECT_EQ(exit.status, 1) << exit.output;
    EXPECT_THAT(exit.output, HasSubstr(key)) << exit.output;
  }
}

}  // namespace
}  // namespace nbspamd::testing
