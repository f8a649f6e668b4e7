// Users teach nbspamd by moving mail, through a real Dovecot set up as docs/DOVECOT.md says
// (tests/support/dovecot_instance.h: contrib/dovecot's configuration, Sieve scripts and pipe
// program, the real nbspamc), against the real daemon on 127.0.0.1. The IMAP client is the
// test's own (tests/support/imap_client.h). The whole mail path adds a throw-away Postfix whose
// milter is the daemon's, delivering over LMTP to that Dovecot.
//
// Needs root and Debian's dovecot-imapd, dovecot-lmtpd, dovecot-sieve and postfix (scripts/
// install-deps --test); without them these tests fail rather than skip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "milter/testing/postfix_instance.h"
#include "milter/testing/smtp_client.h"
#include "tests/support/daemon_process.h"
#include "tests/support/dovecot_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/imap_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using ::testing::HasSubstr;

std::string Message(const std::string& name, const std::string& to, const std::string& subject,
                    const std::string& body) {
  return "From: sender@example.org\r\nTo: " + to + "\r\nSubject: " + subject + "\r\nMessage-ID: <" +
         name + "@example.org>\r\n\r\n" + body + "\r\n";
}

// Documents of `label` in the stats at `path` (/stats, /users/{id}/stats); 0 when the class or
// the user is not there.
std::int64_t Documents(HttpClient& client, const std::string& path, const std::string& label) {
  const HttpResponse response = client.Send(http::verb::get, path);
  if (response.result() == http::status::not_found) return 0;
  const json::value stats = json::parse(response.body());
  for (const json::value& c : stats.at("classes").as_array()) {
    if (c.at("label").as_string() == label) return c.at("documents").to_number<std::int64_t>();
  }
  return 0;
}

// What the ledger has of `user` (training done without tokens has the source ""): id → label.
std::map<std::string, std::string> Learned(HttpClient& client, const std::string& user) {
  const json::value answer = client.GetJson("/admin/learned?source=&user=" + user);
  std::map<std::string, std::string> learned;
  for (const json::value& m : answer.at("messages").as_array()) {
    learned[std::string(m.at("id").as_string())] = std::string(m.at("label").as_string());
  }
  return learned;
}

class DovecotTest : public ::testing::Test {
 protected:
  void StartDaemon(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--listen",         "127.0.0.1:0", "--data-dir",
                                     dir_.Join("model"), "--threads",   "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto started = DaemonProcess::Start(args);
    ASSERT_TRUE(started.has_value()) << started.error();
    daemon_.emplace(std::move(*started));
  }

  // `learn_settings`: more lines of nbspamd-learn.conf.
  void StartDovecot(std::vector<std::string> users, const std::string& learn_settings = "") {
    auto dovecot = DovecotInstance::Start(
        {.users = std::move(users),
         .learn_conf = "NBSPAMC=" + std::string(NBSPAMC_BINARY) + "\nNBSPAMC_SERVER=127.0.0.1:" +
                       std::to_string(daemon_->port()) + "\n" + learn_settings,
         .contrib_dir = std::filesystem::path(NBSPAMD_SOURCE_DIR) / "contrib" / "dovecot"});
    ASSERT_TRUE(dovecot.has_value()) << dovecot.error();
    dovecot_ = std::move(*dovecot);
  }

  ImapClient Login(const std::string& user) {
    auto imap = ImapClient::Connect(dovecot_->imap_port());
    if (!imap) throw std::runtime_error(imap.error());
    if (auto in = imap->Login(user, kDovecotPassword); !in) throw std::runtime_error(in.error());
    return std::move(*imap);
  }

  // Moves the one message of `from` to `to`.
  void MoveOnly(ImapClient& imap, const std::string& from, const std::string& to) {
    ASSERT_TRUE(imap.Select(from));
    auto uids = imap.UidSearch("ALL");
    ASSERT_TRUE(uids.has_value()) << uids.error();
    ASSERT_EQ(uids->size(), 1u) << from;
    auto moved = imap.UidMove(UidSet(*uids), to);
    ASSERT_TRUE(moved.has_value()) << moved.error() << dovecot_->Log();
  }

  ~DovecotTest() override {
    postfix_.reset();  // Postfix first: it may still be delivering to Dovecot.
    dovecot_.reset();
    daemon_.reset();
  }

  TempDir dir_;
  std::optional<DaemonProcess> daemon_;
  std::unique_ptr<DovecotInstance> dovecot_;
  std::unique_ptr<milter::testing::PostfixInstance> postfix_;
};

// Into Junk: spam in the user's layer; out of Junk: relearned as ham; into Junk again: spam
// once; to Trash: nothing; another user and the global model untouched; the daemon down: the
// move goes on and the failure is in Dovecot's log.
TEST_F(DovecotTest, MovesTeachTheUsersLayerExactlyAndNeverFailWithTheDaemonDown) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(StartDovecot({"alice", "bob"}));
  HttpClient client(daemon_->port());
  ImapClient alice = Login("alice");
  ASSERT_TRUE(alice.Append("INBOX", Message("offer1", "alice@example.net", "cheap watches",
                                            "replica watches at the lowest price, buy now")));

  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "INBOX", "Junk"));
  EXPECT_EQ(Documents(client, "/users/alice/stats", "spam"), 1) << dovecot_->Log();
  EXPECT_EQ(Documents(client, "/users/alice/stats", "ham"), 0);
  auto learned = Learned(client, "alice");
  ASSERT_EQ(learned.size(), 1u);
  const std::string id = learned.begin()->first;
  EXPECT_EQ(learned.begin()->second, "spam");

  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "Junk", "INBOX"));
  EXPECT_EQ(Documents(client, "/users/alice/stats", "spam"), 0) << dovecot_->Log();
  EXPECT_EQ(Documents(client, "/users/alice/stats", "ham"), 1);
  EXPECT_EQ(Learned(client, "alice"), (std::map<std::string, std::string>{{id, "ham"}}));

  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "INBOX", "Junk"));
  EXPECT_EQ(Documents(client, "/users/alice/stats", "spam"), 1);
  EXPECT_EQ(Documents(client, "/users/alice/stats", "ham"), 0);
  EXPECT_EQ(Learned(client, "alice"), (std::map<std::string, std::string>{{id, "spam"}}));

  // Junk to Trash is spam thrown away, INBOX to Trash nothing at all.
  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "Junk", "Trash"));
  ASSERT_TRUE(alice.Append("INBOX", Message("note1", "alice@example.net", "minutes",
                                            "the minutes of the planning meeting")));
  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "INBOX", "Trash"));
  EXPECT_EQ(Learned(client, "alice"), (std::map<std::string, std::string>{{id, "spam"}}));
  EXPECT_EQ(Documents(client, "/users/alice/stats", "ham"), 0);

  EXPECT_EQ(client.Send(http::verb::get, "/users/bob/stats").result(), http::status::not_found);
  EXPECT_EQ(Documents(client, "/stats", "spam"), 0);
  EXPECT_EQ(Documents(client, "/stats", "ham"), 0);

  // The daemon down: the move succeeds, and Dovecot's log says what was not learned.
  EXPECT_EQ(daemon_->Terminate(), 0);
  ASSERT_TRUE(alice.Append("INBOX", Message("offer2", "alice@example.net", "casino bonus",
                                            "free casino bonus money, click now")));
  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "INBOX", "Junk"));
  ASSERT_TRUE(alice.Select("Junk"));
  auto in_junk = alice.UidSearch("ALL");
  ASSERT_TRUE(in_junk.has_value());
  EXPECT_EQ(in_junk->size(), 1u);
  EXPECT_THAT(dovecot_->WaitForLog("nbspamc: report: spam for alice not learned: "),
              HasSubstr("nbspamc: report: spam for alice not learned: "));
  // The scripts ran from the binaries compiled at set-up (a recompile would fail to save).
  EXPECT_THAT(dovecot_->Log(), ::testing::Not(HasSubstr("sieve"))) << dovecot_->Log();
}

// A site that trains only the global model says so in nbspamd-learn.conf; a site whose Dovecot
// users are bare names gives the domain that makes them the milter's recipient addresses.
TEST_F(DovecotTest, TheLearnSettingsChooseTheGlobalModelOrAddTheDomain) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(StartDovecot({"alice"}, "NBSPAMD_LEARN_INTO=global\n"));
  HttpClient client(daemon_->port());
  {
    ImapClient alice = Login("alice");
    ASSERT_TRUE(alice.Append(
        "INBOX", Message("g1", "alice@example.net", "prize", "you won a prize, claim it now")));
    ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "INBOX", "Junk"));
  }
  EXPECT_EQ(Documents(client, "/stats", "spam"), 1) << dovecot_->Log();
  EXPECT_EQ(client.Send(http::verb::get, "/users/alice/stats").result(), http::status::not_found);

  dovecot_.reset();
  ASSERT_NO_FATAL_FAILURE(StartDovecot({"alice"}, "NBSPAMD_USER_DOMAIN=example.org\n"));
  ImapClient alice = Login("alice");
  ASSERT_TRUE(alice.Append("INBOX", Message("d1", "alice@example.org", "lottery",
                                            "lottery winner, send your bank details")));
  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "INBOX", "Junk"));
  EXPECT_EQ(Documents(client, "/users/alice@example.org/stats", "spam"), 1) << dovecot_->Log();
  EXPECT_EQ(client.Send(http::verb::get, "/users/alice/stats").result(), http::status::not_found);

  // Settings the mail user cannot read are said so in Dovecot's log (the move goes on).
  std::filesystem::permissions(
      dovecot_->dir() / "pipe" / "nbspamd-learn.conf",
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ASSERT_NO_FATAL_FAILURE(MoveOnly(alice, "Junk", "INBOX"));
  const std::string unreadable = "nbspamd-learn: cannot read " +
                                 (dovecot_->dir() / "pipe" / "nbspamd-learn.conf").string() +
                                 " as nobody: going on without its settings";
  EXPECT_THAT(dovecot_->WaitForLog(unreadable), HasSubstr(unreadable));
}

// A user selects a thousand messages and drops them into Junk: one command, each message piped
// to nbspamd-learn in turn (Dovecot has no batching for IMAPSieve). Prints how long it took.
// BULK_MOVE_MESSAGES sets another number: the sanitizer suites move 100, as each message starts
// a client process, which takes a sanitizer's start-up time.
TEST_F(DovecotTest, ABulkMoveOfAThousandMessagesLearnsEachOnce) {
  const char* messages_variable = std::getenv("BULK_MOVE_MESSAGES");
  const int kMessages =
      messages_variable != nullptr ? std::max(1, std::atoi(messages_variable)) : 1000;
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_NO_FATAL_FAILURE(StartDovecot({"alice"}));
  HttpClient client(daemon_->port());
  ImapClient alice = Login("alice");
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(alice.Append(
        "INBOX",
        Message("bulk" + std::to_string(i), "alice@example.net", "offer " + std::to_string(i),
                "cheap pills and casino bonus number " + std::to_string(i))));
  }
  ASSERT_TRUE(alice.Select("INBOX"));
  const auto start = std::chrono::steady_clock::now();
  auto moved = alice.UidMove("1:*", "Junk");
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(moved.has_value()) << moved.error();
  std::printf("bulk move of %d messages into Junk: %.2f s, %.1f ms a message\n", kMessages,
              took.count(), 1000 * took.count() / kMessages);
  RecordProperty("bulk_move_seconds", std::to_string(took.count()));
  EXPECT_EQ(Documents(client, "/users/alice/stats", "spam"), kMessages) << dovecot_->Log();
  EXPECT_EQ(Learned(client, "alice").size(), static_cast<std::size_t>(kMessages));
}

// The whole path: SMTP into Postfix, the daemon's milter scores it with alice's layer and adds
// its headers, LMTP into Dovecot, whose Sieve files X-Spam-Flag: YES into Junk. Alice moves the
// ham wrongly filed there to INBOX; her layer learns it, by the scan id in the delivered headers,
// as ham; the same message sent again lands in INBOX.
TEST_F(DovecotTest, AHamFiledInJunkIsLearnedFromItsScanAndTheNextCopyLandsInTheInbox) {
  const std::string kAlice = "alice@nbspamd.test";
  // A user's own evidence weighs much (small β, γ), so that one report turns her verdict.
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon({"--milter-listen", "inet:127.0.0.1:0", "--milter-user-layers", "true",
                   "--user-beta", "1", "--user-gamma", "0.01"}));
  const auto milter_port = daemon_->LoggedPort("milter listening on inet:127.0.0.1:");
  ASSERT_TRUE(milter_port.has_value()) << daemon_->Log();
  HttpClient client(daemon_->port());
  // The global model takes newsletters about offers for spam.
  for (const char* spam :
       {"weekly offer newsletter discount deals", "special offer discount deals today",
        "newsletter deals discount offer weekly", "discount offer deals subscribe newsletter"}) {
    ASSERT_EQ(client.Send(http::verb::post, "/train?label=spam", spam).result(), http::status::ok);
  }
  for (const char* ham : {"meeting agenda friday project", "project report review team",
                          "lunch friday team meeting", "review of the project agenda"}) {
    ASSERT_EQ(client.Send(http::verb::post, "/train?label=ham", ham).result(), http::status::ok);
  }
  ASSERT_NO_FATAL_FAILURE(StartDovecot({kAlice}));
  milter::testing::PostfixOptions options;
  options.milter = "inet:127.0.0.1:" + std::to_string(*milter_port);
  options.milter_default_action = "tempfail";
  options.extra_settings = {
      {"virtual_transport", "lmtp:inet:127.0.0.1:" + std::to_string(dovecot_->lmtp_port())}};
  auto postfix = milter::testing::PostfixInstance::Start(options);
  ASSERT_TRUE(postfix.has_value()) << postfix.error().message;
  postfix_ = std::move(*postfix);

  const std::string newsletter = Message("club1", kAlice, "weekly newsletter of the club",
                                         "the club newsletter: weekly deals and discount offer");
  const milter::testing::SmtpEnvelope envelope{.sender = "sender@example.org",
                                               .recipients = {kAlice}};
  auto sent = milter::testing::SendMail(postfix_->smtp_port(), envelope, newsletter);
  ASSERT_TRUE(sent.has_value()) << sent.error().message;
  ASSERT_EQ(sent->reply.code, 250) << postfix_->LogTail();

  // Delivered into Junk, with the daemon's headers.
  ImapClient alice = Login(kAlice);
  std::vector<std::uint32_t> junk;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (junk.empty() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(alice.Select("Junk"));
    auto found = alice.UidSearch("ALL");
    ASSERT_TRUE(found.has_value()) << found.error();
    junk = *found;
    if (junk.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(junk.size(), 1u) << postfix_->LogTail() << dovecot_->Log();
  auto delivered = alice.UidFetchMessage(junk.front());
  ASSERT_TRUE(delivered.has_value()) << delivered.error();
  EXPECT_THAT(*delivered, HasSubstr("X-Spam-Flag: YES"));
  const std::size_t scan_at = delivered->find(" scan=");
  ASSERT_NE(scan_at, std::string::npos) << *delivered;
  const std::string scan_id = delivered->substr(scan_at + 6, 20);
  const json::value scan = client.GetJson("/history/" + scan_id);
  EXPECT_EQ(scan.at("user").as_string(), kAlice) << scan;

  // Alice moves it to INBOX: learned as ham in her layer, under the scan's key.
  ASSERT_TRUE(alice.UidMove(std::to_string(junk.front()), "INBOX"));
  EXPECT_EQ(Documents(client, "/users/" + kAlice + "/stats", "ham"), 1) << dovecot_->Log();
  EXPECT_EQ(Documents(client, "/stats", "ham"), 4);  // The global model as it was.
  const auto learned = Learned(client, kAlice);
  ASSERT_EQ(learned.size(), 1u);
  EXPECT_EQ(learned.begin()->second, "ham");
  EXPECT_EQ(learned.begin()->first, std::string(scan.at("message_key").as_string())) << scan;
  // The History says so: learned as ham from the reported copy (no token here: by nobody).
  const json::value state = client.GetJson("/history/" + scan_id).at("learned");
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("as").as_string(), "ham");
  EXPECT_EQ(state.at("how").as_string(), "scan_header");
  EXPECT_TRUE(state.at("by").is_null()) << state;

  // The same message again: her layer now says ham, and Dovecot files it in INBOX.
  sent = milter::testing::SendMail(postfix_->smtp_port(), envelope, newsletter);
  ASSERT_TRUE(sent.has_value()) << sent.error().message;
  ASSERT_EQ(sent->reply.code, 250) << postfix_->LogTail();
  std::vector<std::uint32_t> inbox;
  while (inbox.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(alice.Select("INBOX"));
    auto found = alice.UidSearch("ALL");
    ASSERT_TRUE(found.has_value()) << found.error();
    inbox = *found;
    if (inbox.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(inbox.size(), 2u) << postfix_->LogTail() << dovecot_->Log();
  auto second = alice.UidFetchMessage(inbox.back());
  ASSERT_TRUE(second.has_value()) << second.error();
  EXPECT_THAT(*second, HasSubstr("X-Nbspamd: ham "));
  EXPECT_THAT(*second, ::testing::Not(HasSubstr("X-Spam-Flag")));
  ASSERT_TRUE(alice.Select("Junk"));
  auto still_junk = alice.UidSearch("ALL");
  ASSERT_TRUE(still_junk.has_value());
  EXPECT_TRUE(still_junk->empty());
}

}  // namespace
}  // namespace nbspamd::testing
