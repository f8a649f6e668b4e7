// The scan history through the real daemon: scan ids on /classify, GET /history and
// GET /history/{id}, training and forgetting by scan id (idempotent, relearn, across a restart,
// with a user), the bounds' 410, DELETE /users/{id} and the history turned off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/seed_examples.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using ::testing::HasSubstr;

constexpr char kNewsletter[] =
    "From: Weekly <news@Lists.Example.org>\r\n"
    "Subject: Our <script>alert(1)</script> newsletter\r\n"
    "Message-ID: <weekly-42@lists.example.org>\r\n"
    "\r\n"
    "review your account settings for the newsletter\r\n";

class HistoryTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    return StartTestDaemon(data_.Join("model"), extra);
  }

  static void TrainSeed(HttpClient& client) { TrainSeedExamples(client); }

  static json::value Json(const HttpResponse& response) { return json::parse(response.body()); }

  static std::string ScanOf(HttpClient& client, const std::string& query, const std::string& text) {
    const auto response = client.Send(http::verb::post, "/classify" + query, text);
    EXPECT_EQ(response.result(), http::status::ok) << response.body();
    return std::string(Json(response).at("scan_id").as_string());
  }

  static std::int64_t Documents(HttpClient& client, const std::string& path = "/stats") {
    return client.GetJson(path).at("documents").as_int64();
  }

  static std::string ErrorCodeOf(const HttpResponse& response) {
    return std::string(Json(response).at("error").at("code").as_string());
  }

  TempDir data_;
};

TEST_F(HistoryTest, AClassifiedMessageIsListedAndExplainedWithItsFactsAsKept) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string older = ScanOf(client, "", "send us your password now");
  const std::string scan_id = ScanOf(client, "?explain=2", kNewsletter);
  EXPECT_EQ(scan_id.size(), 20u);
  EXPECT_LT(older, scan_id);

  const json::value page = client.GetJson("/history");
  const json::array& scans = page.at("scans").as_array();
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_EQ(scans[0].at("scan_id").as_string(), scan_id);  // Newest first.
  EXPECT_EQ(scans[1].at("scan_id").as_string(), older);
  EXPECT_TRUE(page.at("next").is_null());
  const json::value& scan = scans[0];
  EXPECT_EQ(scan.at("front_end").as_string(), "http");
  EXPECT_TRUE(scan.at("user").is_null());
  EXPECT_EQ(scan.at("facts").at("from_domain").as_string(), "lists.example.org");
  EXPECT_EQ(scan.at("facts").at("message_id").as_string(), "weekly-42@lists.example.org");
  // The subject is kept in clear by default (for history_clear_facts_days): a word finds it.
  EXPECT_EQ(scan.at("facts").at("subject").as_string(), "Our <script>alert(1)</script> newsletter");
  EXPECT_TRUE(scan.at("learned").is_null());
  EXPECT_EQ(page.at("scans").as_array().size(), 2u);
  EXPECT_EQ(client.GetJson("/history?q=OUR%20%3Cscript%3Ealert(1)%3C%2Fscript%3E%20NEWSLETTER")
                .at("scans")
                .as_array()
                .size(),
            1u);
  EXPECT_EQ(client.GetJson("/history?q=newsletter").at("scans").as_array().size(), 1u);
  EXPECT_EQ(client.GetJson("/history?q=example.ORG").at("scans").as_array().size(), 1u);
  const json::value facts = page.at("history_facts");
  EXPECT_EQ(facts.at("subject").as_string(), "keep");
  EXPECT_EQ(facts.at("recipients").as_string(), "keep");
  EXPECT_EQ(facts.at("clear_days").as_int64(), 7);
  EXPECT_TRUE(page.at("notice").is_null());  // No search: nothing to say.

  const json::value stats = client.GetJson("/stats");
  EXPECT_EQ(stats.at("history").at("max_scans").as_int64(), 100000);
  EXPECT_EQ(stats.at("history").at("max_age_days").as_int64(), 30);
  const std::string metrics = client.Send(http::verb::get, "/metrics").body();
  EXPECT_NE(metrics.find("nbspamd_history_scans_total{outcome=\"recorded\"}"), std::string::npos);
  EXPECT_NE(metrics.find("nbspamd_history_scans "), std::string::npos);

  const json::value detail = client.GetJson("/history/" + scan_id);
  EXPECT_EQ(detail.at("scan_id").as_string(), scan_id);
  EXPECT_GE(detail.at("explain").as_array().size(), 2u);  // More than the classify asked for.
  EXPECT_GT(detail.at("bag_tokens").as_int64(), 5);
  EXPECT_EQ(detail.at("verdict"), scan.at("verdict"));
}

// history_explain: how many explaining tokens a scan keeps; 0 keeps none, while a /classify
// that asks for tokens still gets them and the scan still learns by its id.
TEST_F(HistoryTest, HistoryExplainBoundsTheTokensAScanKeeps) {
  {
    DaemonProcess daemon = Start({"--history-explain", "3"});
    HttpClient client(daemon.port());
    TrainSeed(client);
    const std::string scan_id = ScanOf(client, "", kNewsletter);
    EXPECT_EQ(client.GetJson("/history/" + scan_id).at("explain").as_array().size(), 3u);
  }
  DaemonProcess daemon = Start({"--history-explain", "0"});
  HttpClient client(daemon.port());
  const std::string quiet = ScanOf(client, "", kNewsletter);
  const json::value detail = client.GetJson("/history/" + quiet);
  EXPECT_TRUE(detail.at("explain").as_array().empty());
  EXPECT_GT(detail.at("bag_tokens").as_int64(), 5);
  const auto asked = client.Send(http::verb::post, "/classify?explain=2", kNewsletter);
  ASSERT_EQ(asked.result(), http::status::ok) << asked.body();
  EXPECT_EQ(Json(asked).at("explain").as_array().size(), 2u);
  const std::string asked_id(Json(asked).at("scan_id").as_string());
  EXPECT_TRUE(client.GetJson("/history/" + asked_id).at("explain").as_array().empty());
  const std::int64_t before = Documents(client);
  const auto trained = client.Send(http::verb::post, "/train?label=ham&scan_id=" + quiet, "");
  EXPECT_EQ(trained.result(), http::status::ok) << trained.body();
  EXPECT_EQ(Documents(client), before + 1);
  // Out of range: the daemon refuses to start and says why.
  TempDir other;
  const ProcessExit refused = RunToExit(
      {"--data-dir", other.Join("model"), "--listen", "127.0.0.1:0", "--history-explain", "101"});
  EXPECT_NE(refused.status, 0);
  EXPECT_THAT(refused.output, HasSubstr("history_explain"));
}

// A fact kept as a hash does not show through the explanation: the Subject's words were in
// clear among the tokens of /history/{id} ("subject:newsletter") while the Subject itself was a
// hash. Now they are hashed after their prefix, with the history's own key, as the fact is; the
// page and the /classify answer of the requester itself keep them.
TEST_F(HistoryTest, AHashedSubjectDoesNotShowThroughTheExplanationTokens) {
  DaemonProcess daemon = Start({"--history-keep-subject", "hash"});
  HttpClient client(daemon.port());
  TrainSeed(client);
  // Subject words the model knows, so that they weigh in the explanation.
  for (const auto& [label, text] :
       {std::pair{"spam", "Subject: our newsletter offer\r\n\r\ncheap offer"},
        std::pair{"spam", "Subject: newsletter prize\r\n\r\nprize money"},
        std::pair{"ham", "Subject: script review\r\n\r\nreview notes"}}) {
    ASSERT_EQ(client.Send(http::verb::post, std::string("/train?label=") + label, text).result(),
              http::status::ok);
  }
  const std::string scan_id = ScanOf(client, "?explain=0", kNewsletter);
  const json::value detail = client.GetJson("/history/" + scan_id);
  int subject_tokens = 0;
  for (const json::value& token : detail.at("explain").as_array()) {
    const std::string text(token.at("token").as_string());
    if (!text.starts_with("subject:")) continue;
    ++subject_tokens;
    EXPECT_EQ(text.size(), 8u + 17u) << text;
    EXPECT_EQ(text[8], '#') << text;
  }
  EXPECT_GT(subject_tokens, 0) << "the subject's words weigh: they are there, hashed";
  const std::string body = client.Send(http::verb::get, "/history/" + scan_id).body();
  for (const char* word : {"subject:our", "subject:newsletter", "subject:script", "alert"}) {
    EXPECT_EQ(body.find(word), std::string::npos) << word << " in " << body;
  }
  // The requester's own answer explains in clear.
  const json::value own = client.PostJson("/classify?explain=1000", kNewsletter);
  EXPECT_NE(json::serialize(own).find("subject:newsletter"), std::string::npos);
  // A word of a hashed subject finds nothing, and the answer says why.
  const json::value searched = client.GetJson("/history?q=newsletter");
  EXPECT_TRUE(searched.at("scans").as_array().empty()) << searched;
  EXPECT_EQ(searched.at("history_facts").at("subject").as_string(), "hash");
  EXPECT_THAT(std::string(searched.at("notice").as_string()),
              HasSubstr("subjects are kept as hashes"));
}

TEST_F(HistoryTest, FiltersAndPagesWalkTheWholeHistoryOnce) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(ScanOf(client, "", "review us " + std::to_string(i)));
  std::vector<std::string> listed;
  std::string target = "/history?limit=3";
  for (int pages = 0; pages < 10; ++pages) {
    const json::value page = client.GetJson(target);
    for (const json::value& scan : page.at("scans").as_array()) {
      listed.push_back(std::string(scan.at("scan_id").as_string()));
    }
    if (page.at("next").is_null()) break;
    target = "/history?limit=3&before=" + std::string(page.at("next").as_string());
  }
  EXPECT_EQ(listed, std::vector<std::string>(ids.rbegin(), ids.rend()));
  const std::string verdict(client.GetJson("/history/" + ids[0]).at("verdict").as_string());
  EXPECT_EQ(client.GetJson("/history?verdict=" + verdict).at("scans").as_array().size(), 7u);
  EXPECT_EQ(client.GetJson("/history?front_end=milter").at("scans").as_array().size(), 0u);

  for (const char* bad : {"/history?limit=0", "/history?limit=1001", "/history?verdict=maybe",
                          "/history?since=yesterday", "/history?before=x", "/history?colour=red",
                          "/history/nonsense"}) {
    const auto response = client.Send(http::verb::get, bad);
    EXPECT_EQ(response.result(), http::status::bad_request) << bad << ": " << response.body();
    EXPECT_EQ(ErrorCodeOf(response), "invalid_argument") << bad;
  }
  const auto unknown =
      client.Send(http::verb::get, "/history/" + ids[0].substr(0, 12) + "ffffffff");
  EXPECT_EQ(unknown.result(), http::status::not_found) << unknown.body();
}

TEST_F(HistoryTest, TrainingAScanLearnsItsBagOnceMovesItOnRelearnAndSurvivesARestart) {
  std::string scan_id;
  std::int64_t before = 0;
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    TrainSeed(client);
    before = Documents(client);
    scan_id = ScanOf(client, "", kNewsletter);
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const auto learned = client.Send(http::verb::post, "/train?label=ham&scan_id=" + scan_id);
  ASSERT_EQ(learned.result(), http::status::ok) << learned.body();
  EXPECT_EQ(Json(learned).at("status").as_string(), "learned");
  EXPECT_EQ(Documents(client), before + 1);
  const json::value ham_before_relearn = client.GetJson("/stats");

  const auto again = client.Send(http::verb::post, "/train?label=ham&scan_id=" + scan_id);
  EXPECT_EQ(Json(again).at("status").as_string(), "unchanged");
  EXPECT_EQ(client.GetJson("/stats"), ham_before_relearn);

  // The same message trained from its bytes is the same message: its id is the scan's key.
  const auto by_bytes = client.Send(http::verb::post, "/train?label=ham", kNewsletter);
  EXPECT_EQ(Json(by_bytes).at("status").as_string(), "unchanged") << by_bytes.body();

  const auto relearned = client.Send(http::verb::post, "/train?label=spam&scan_id=" + scan_id);
  EXPECT_EQ(Json(relearned).at("status").as_string(), "relearned");
  EXPECT_EQ(Documents(client), before + 1);

  // As `curl -X POST URL` asks: no body, and no Content-Length either.
  const std::string forgotten =
      client.RawExchange("POST /forget?scan_id=" + scan_id +
                         " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(forgotten, HasSubstr("200 OK"));
  EXPECT_THAT(forgotten, HasSubstr("\"forgotten\""));
  EXPECT_EQ(Documents(client), before);

  const auto both = client.Send(http::verb::post, "/train?label=spam&scan_id=" + scan_id, "text");
  EXPECT_EQ(both.result(), http::status::bad_request) << both.body();
  const auto no_label = client.Send(http::verb::post, "/train?scan_id=" + scan_id);
  EXPECT_EQ(no_label.result(), http::status::bad_request) << no_label.body();
}

// The copy a user reports carries the header nbspamd added: it is the classified message (the
// same id, the same bag), and the header itself is never a token.
TEST_F(HistoryTest, AReportedCopyWithTheScanHeaderIsTheMessageThatWasClassified) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const auto classified = client.Send(http::verb::post, "/classify", kNewsletter);
  const std::string scan_id(Json(classified).at("scan_id").as_string());
  const std::string signature(Json(classified).at("scan_signature").as_string());
  ASSERT_EQ(signature.size(), 32u);
  const std::string copy =
      "Return-Path: <news@lists.example.org>\r\nX-Nbspamd: ham - score=-1 scan=" + scan_id +
      " sig=" + signature + "\r\nX-Spam-Scan-Id: " + scan_id + "; sig=" + signature + "\r\n" +
      kNewsletter;

  const json::value explained = Json(client.Send(http::verb::post, "/classify?explain=1000", copy));
  for (const json::value& token : explained.at("explain").as_array()) {
    EXPECT_EQ(token.at("token").as_string().find("nbspamd"), json::string::npos) << token;
    EXPECT_EQ(token.at("token").as_string().find("scan"), json::string::npos) << token;
  }
  const auto reported = client.Send(http::verb::post, "/train?label=spam", copy);
  ASSERT_EQ(reported.result(), http::status::ok) << reported.body();
  EXPECT_EQ(Json(reported).at("status").as_string(), "learned");
  EXPECT_EQ(Json(reported).at("scan_header").as_string(), "matched");
  const std::string key(client.GetJson("/history/" + scan_id).at("message_key").as_string());
  EXPECT_EQ(Json(reported).at("id").as_string(), key);
  const auto original = client.Send(http::verb::post, "/train?label=spam", kNewsletter);
  EXPECT_EQ(Json(original).at("status").as_string(), "unchanged") << original.body();
  const auto forgotten = client.Send(http::verb::post, "/forget", copy);
  ASSERT_EQ(forgotten.result(), http::status::ok) << forgotten.body();
  EXPECT_EQ(Json(forgotten).at("id").as_string(), key);

  // Without the signature (a header written before headers were signed, or by a sender who
  // guessed the id), the copy is learned as itself.
  const std::string unsigned_copy =
      "X-Spam-Scan-Id: " + scan_id + "\r\nX-Other: copy\r\n" + kNewsletter;
  const auto unsigned_report = client.Send(http::verb::post, "/train?label=spam", unsigned_copy);
  ASSERT_EQ(unsigned_report.result(), http::status::ok) << unsigned_report.body();
  EXPECT_EQ(Json(unsigned_report).at("scan_header").as_string(), "unsigned");
  EXPECT_NE(Json(unsigned_report).at("id").as_string(), key);
}

// The attack: a spam carrying the scan header of an earlier, harmless message, reported as spam
// without an id (as nbspamc report and the Dovecot kit do). Learned as that scan, the spam's own
// words would never reach the model and the harmless message would count as spam.
TEST_F(HistoryTest, AScanHeaderOnAnotherMessageIsLearnedAsThatMessageAndSaysSo) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const auto classified = client.Send(http::verb::post, "/classify", kNewsletter);
  const std::string scan_id(Json(classified).at("scan_id").as_string());
  // The harmless message's real header, signed by this daemon, copied onto the spam.
  const std::string signature(Json(classified).at("scan_signature").as_string());
  const std::string key(client.GetJson("/history/" + scan_id).at("message_key").as_string());
  const std::string spam =
      "From: winner@prize.example\r\nSubject: claim now\r\nX-Spam-Scan-Id: " + scan_id +
      "; sig=" + signature + "\r\nX-Nbspamd: ham - score=-1 scan=" + scan_id + " sig=" + signature +
      "\r\n\r\ncheap pills casino winner money now\r\n";
  const std::int64_t spam_tokens =
      Json(client.Send(http::verb::post, "/classify", spam)).at("tokens").as_int64();
  const auto reported = client.Send(http::verb::post, "/train?label=spam", spam);
  ASSERT_EQ(reported.result(), http::status::ok) << reported.body();
  EXPECT_EQ(Json(reported).at("scan_header").as_string(), "other_message") << reported.body();
  EXPECT_NE(Json(reported).at("id").as_string(), key);
  EXPECT_EQ(Json(reported).at("tokens").as_int64(), spam_tokens) << "the spam's own words";
  // The harmless message was not learned as spam: learning it as ham is new, not a relearn.
  const auto harmless = client.Send(http::verb::post, "/train?label=ham", kNewsletter);
  EXPECT_EQ(Json(harmless).at("status").as_string(), "learned") << harmless.body();
  // A forget by the forged copy forgets the spam, not the harmless message.
  const auto forgotten = client.Send(http::verb::post, "/forget", spam);
  ASSERT_EQ(forgotten.result(), http::status::ok) << forgotten.body();
  EXPECT_EQ(Json(forgotten).at("id").as_string(), Json(reported).at("id").as_string());
  const auto again = client.Send(http::verb::post, "/train?label=ham", kNewsletter);
  EXPECT_EQ(Json(again).at("status").as_string(), "unchanged") << again.body();

  // A signature made up for the spam's own body does not hold either: the key is secret.
  std::string forged = spam;
  for (std::size_t at = forged.find(signature); at != std::string::npos;
       at = forged.find(signature, at + 1)) {
    forged.replace(at, signature.size(), "00112233445566778899aabbccddeeff");
  }
  const auto forged_report = client.Send(http::verb::post, "/train?label=spam", forged);
  ASSERT_EQ(forged_report.result(), http::status::ok) << forged_report.body();
  EXPECT_EQ(Json(forged_report).at("scan_header").as_string(), "other_message");
  EXPECT_NE(Json(forged_report).at("id").as_string(), key);
}

TEST_F(HistoryTest, AScanOfAUserTrainsThatUsersLayerAndDeletingTheUserDeletesTheirScans) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::int64_t global = Documents(client);
  const std::string alice_scan = ScanOf(client, "?user=alice", kNewsletter);
  const std::string global_scan = ScanOf(client, "", "review us");
  EXPECT_EQ(client.GetJson("/history/" + alice_scan).at("user").as_string(), "alice");

  const auto learned = client.Send(http::verb::post, "/train?label=spam&scan_id=" + alice_scan);
  ASSERT_EQ(learned.result(), http::status::ok) << learned.body();
  EXPECT_EQ(Documents(client, "/users/alice/stats"), 1);
  EXPECT_EQ(Documents(client), global);  // Only alice's layer.

  const auto for_bob =
      client.Send(http::verb::post, "/train?label=ham&user=bob&scan_id=" + global_scan);
  ASSERT_EQ(for_bob.result(), http::status::ok) << for_bob.body();
  EXPECT_EQ(Documents(client, "/users/bob/stats"), 1);

  EXPECT_EQ(client.GetJson("/history?user=alice").at("scans").as_array().size(), 1u);
  ASSERT_EQ(client.Send(http::verb::delete_, "/users/alice").result(), http::status::ok);
  EXPECT_EQ(client.GetJson("/history?user=alice").at("scans").as_array().size(), 0u);
  EXPECT_EQ(client.Send(http::verb::get, "/history/" + alice_scan).result(),
            http::status::not_found);
  EXPECT_EQ(client.Send(http::verb::get, "/history/" + global_scan).result(), http::status::ok);
}

TEST_F(HistoryTest, AScanBeyondTheBoundsIsGoneAndSaysSo) {
  DaemonProcess daemon = Start({"--history-max-scans", "2"});
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string first = ScanOf(client, "", "review us 1");
  ScanOf(client, "", "review us 2");
  ScanOf(client, "", "review us 3");
  // The bound applies once the writer has written the scans (it waits a moment to write many at
  // once): wait for it, at most 10 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.Send(http::verb::get, "/history/" + first).result() == http::status::gone) break;
    ScanOf(client, "", "review us more");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto gone = client.Send(http::verb::get, "/history/" + first);
  ASSERT_EQ(gone.result(), http::status::gone) << gone.body();
  EXPECT_EQ(ErrorCodeOf(gone), "expired");
  EXPECT_NE(gone.body().find("has aged out of the history"), std::string::npos);
  const auto train = client.Send(http::verb::post, "/train?label=spam&scan_id=" + first);
  EXPECT_EQ(train.result(), http::status::gone) << train.body();
  const json::value listed = client.GetJson("/history?limit=1000");
  for (const json::value& scan : listed.at("scans").as_array()) {
    EXPECT_NE(scan.at("scan_id").as_string(), first);
  }
}

TEST_F(HistoryTest, WithTheHistoryOffNothingIsKeptAndScanRequestsSaySo) {
  DaemonProcess daemon = Start({"--history", "false"});
  HttpClient client(daemon.port());
  TrainSeed(client);
  const auto classified = client.Send(http::verb::post, "/classify", "review us");
  EXPECT_FALSE(Json(classified).as_object().contains("scan_id"));
  EXPECT_FALSE(client.GetJson("/stats").as_object().contains("history"));
  const auto history = client.Send(http::verb::get, "/history");
  EXPECT_EQ(history.result(), http::status::not_found);
  EXPECT_NE(history.body().find("the scan history is off"), std::string::npos);
  const auto train =
      client.Send(http::verb::post, "/train?label=spam&scan_id=018bcfe5680012340000");
  EXPECT_EQ(train.result(), http::status::conflict) << train.body();
}

// The learned state of a scan (docs/API.md, "Scan history"): how, when and by whom it was learned,
// relearned or forgotten, through each path, shown by GET /history and /history/{id}, kept across
// a restart, and filtered on.
class LearnedHistoryTest : public HistoryTest {
 protected:
  static constexpr char kAlice[] = "alice-learned-secret-1";
  static constexpr char kBob[] = "bob-learned-secret-22";

  DaemonProcess StartWithTokens() {
    return Start({"--auth-tokens", std::string("alice:") + kAlice + ",bob:" + kBob});
  }

  static std::vector<std::pair<std::string, std::string>> As(const char* secret) {
    return {{"Authorization", std::string("Bearer ") + secret}};
  }

  static void Seed(HttpClient& client) {
    int i = 0;
    for (const SeedDocument& document : SeedExamples()) {
      const auto response = client.Send(
          http::verb::post,
          std::string("/train?label=") + document.label + "&id=seed-" + std::to_string(++i),
          document.text, "text/plain", As(kAlice));
      ASSERT_EQ(response.result(), http::status::ok) << response.body();
    }
  }

  static HttpResponse Post(HttpClient& client, const std::string& target, const char* secret,
                           const std::string& body = "") {
    return client.Send(http::verb::post, target, body, "text/plain", As(secret));
  }

  // The scan's "learned", as GET /history/{id} shows it.
  static json::value LearnedOf(HttpClient& client, const std::string& scan_id) {
    return client.GetJson("/history/" + scan_id).at("learned");
  }

  // Waits (at most 10 s) until the scan's learned state has `changes` changes.
  static json::value LearnedWithChanges(HttpClient& client, const std::string& scan_id,
                                        std::int64_t changes) {
    json::value learned;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
      learned = LearnedOf(client, scan_id);
      if (learned.is_object() && learned.at("changes").as_int64() == changes) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    return learned;
  }

  static std::size_t Listed(HttpClient& client, const std::string& query) {
    return client.GetJson("/history" + query).at("scans").as_array().size();
  }
};

TEST_F(LearnedHistoryTest, ATrainByScanIdARelearnAndAForgetAreShownAndSurviveARestart) {
  std::string scan_id;
  std::string untouched;
  {
    DaemonProcess daemon = StartWithTokens();
    HttpClient client(daemon.port());
    Seed(client);
    scan_id = ScanOf(client, "", kNewsletter);
    untouched = ScanOf(client, "", "review your account today");
    EXPECT_TRUE(LearnedOf(client, scan_id).is_null());

    const auto learned = Post(client, "/train?label=spam&scan_id=" + scan_id, kAlice);
    ASSERT_EQ(learned.result(), http::status::ok) << learned.body();
    // Shown at once: the answer comes once the training is durable, and its mark before it.
    json::value state = LearnedOf(client, scan_id);
    ASSERT_TRUE(state.is_object()) << state;
    EXPECT_EQ(state.at("state").as_string(), "learned");
    EXPECT_EQ(state.at("as").as_string(), "spam");
    EXPECT_EQ(state.at("how").as_string(), "scan_id");
    EXPECT_EQ(state.at("by").as_string(), "alice");
    EXPECT_EQ(state.at("changes").as_int64(), 1);
    EXPECT_EQ(state.at("at").as_string().size(), 20u);  // "2026-12-05T03:04:05Z"
    EXPECT_EQ(state.at("at").as_string().back(), 'Z');
    const std::int64_t at_ms = state.at("at_ms").as_int64();
    EXPECT_GE(at_ms, client.GetJson("/history/" + scan_id).at("time_ms").as_int64());

    // The same class again is no change; bob's relearn as ham is.
    ASSERT_EQ(Post(client, "/train?label=spam&scan_id=" + scan_id, kBob).result(),
              http::status::ok);
    EXPECT_EQ(LearnedOf(client, scan_id).at("by").as_string(), "alice");
    const auto relearned = Post(client, "/train?label=ham&scan_id=" + scan_id, kBob);
    EXPECT_EQ(Json(relearned).at("status").as_string(), "relearned") << relearned.body();
    state = LearnedOf(client, scan_id);
    EXPECT_EQ(state.at("as").as_string(), "ham");
    EXPECT_EQ(state.at("by").as_string(), "bob");
    EXPECT_EQ(state.at("changes").as_int64(), 2);

    // Listed with it, and the filter finds it.
    const json::value page = client.GetJson("/history");
    EXPECT_EQ(page.at("scans").as_array()[1].at("learned"), state);
    EXPECT_TRUE(page.at("scans").as_array()[0].at("learned").is_null());
    EXPECT_EQ(Listed(client, "?learned=yes"), 1u);
    EXPECT_EQ(Listed(client, "?learned=ham"), 1u);
    EXPECT_EQ(Listed(client, "?learned=spam"), 0u);
    EXPECT_EQ(Listed(client, "?learned=no"), 1u);
    EXPECT_EQ(client.GetJson("/history?learned=yes").at("scans").as_array()[0].at("scan_id"),
              json::value(scan_id));
    const auto bad = client.Send(http::verb::get, "/history?learned=maybe");
    EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();

    ASSERT_EQ(Post(client, "/forget?scan_id=" + scan_id, kAlice).result(), http::status::ok);
    state = LearnedOf(client, scan_id);
    EXPECT_EQ(state.at("state").as_string(), "forgotten");
    EXPECT_TRUE(state.at("as").is_null());
    EXPECT_EQ(state.at("by").as_string(), "alice");
    EXPECT_EQ(state.at("changes").as_int64(), 3);
    EXPECT_EQ(Listed(client, "?learned=forgotten"), 1u);
    EXPECT_EQ(Listed(client, "?learned=yes"), 0u);
    EXPECT_EQ(Listed(client, "?learned=no"), 2u);
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  DaemonProcess daemon = StartWithTokens();
  HttpClient client(daemon.port());
  const json::value state = LearnedOf(client, scan_id);
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("state").as_string(), "forgotten");
  EXPECT_EQ(state.at("changes").as_int64(), 3);
  EXPECT_TRUE(LearnedOf(client, untouched).is_null());
  EXPECT_EQ(Listed(client, "?learned=forgotten"), 1u);
}

// Error-driven training: a train the model already scored right beyond train_margin is only
// checked (recorded, not counted), and the scan says so; counted by a later train, it says that.
TEST_F(LearnedHistoryTest, AnOnlyCheckedTrainSaysSoUntilATrainCountsIt) {
  std::string scan_id;
  std::string label;
  {
    DaemonProcess daemon = Start(
        {"--auth-tokens", std::string("alice:") + kAlice + ",bob:" + kBob, "--train-margin", "0"});
    HttpClient client(daemon.port());
    Seed(client);
    scan_id = ScanOf(client, "", kNewsletter);
    ScanOf(client, "", "review your account today");
    label = client.GetJson("/history/" + scan_id).at("label").as_string();
    const auto checked = Post(client, "/train?label=" + label + "&scan_id=" + scan_id, kAlice);
    ASSERT_EQ(checked.result(), http::status::ok) << checked.body();
    EXPECT_EQ(Json(checked).at("status").as_string(), "checked") << checked.body();
    const json::value state = LearnedOf(client, scan_id);
    ASSERT_TRUE(state.is_object()) << state;
    EXPECT_EQ(state.at("state").as_string(), "checked");
    EXPECT_EQ(state.at("as").as_string(), label);
    EXPECT_EQ(state.at("by").as_string(), "alice");
    EXPECT_EQ(state.at("changes").as_int64(), 1);
    // Checked again: no change.
    ASSERT_EQ(Post(client, "/train?label=" + label + "&scan_id=" + scan_id, kBob).result(),
              http::status::ok);
    EXPECT_EQ(LearnedOf(client, scan_id), state);
    EXPECT_EQ(Listed(client, "?learned=checked"), 1u);
    EXPECT_EQ(Listed(client, "?learned=yes"), 1u);
    EXPECT_EQ(Listed(client, "?learned=" + label), 1u);
    EXPECT_EQ(Listed(client, "?learned=no"), 1u);
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  // Every train counted now: the same train counts the message, and the scan says it is learned.
  DaemonProcess daemon = Start(
      {"--auth-tokens", std::string("alice:") + kAlice + ",bob:" + kBob, "--train-margin", ""});
  HttpClient client(daemon.port());
  EXPECT_EQ(LearnedOf(client, scan_id).at("state").as_string(), "checked");
  const auto counted = Post(client, "/train?label=" + label + "&scan_id=" + scan_id, kBob);
  ASSERT_EQ(counted.result(), http::status::ok) << counted.body();
  EXPECT_EQ(Json(counted).at("status").as_string(), "learned") << counted.body();
  const json::value state = LearnedOf(client, scan_id);
  EXPECT_EQ(state.at("state").as_string(), "learned") << state;
  EXPECT_EQ(state.at("by").as_string(), "bob");
  EXPECT_EQ(state.at("changes").as_int64(), 2);
  EXPECT_EQ(Listed(client, "?learned=checked"), 0u);
  EXPECT_EQ(Listed(client, "?learned=yes"), 1u);
}

TEST_F(LearnedHistoryTest, AReportedCopyAMessageIdAndTheMessagesBytesMarkTheirScans) {
  DaemonProcess daemon = StartWithTokens();
  HttpClient client(daemon.port());
  Seed(client);
  // A reported copy carrying the scan header (nbspamc report, the Dovecot kit).
  const auto classified = client.Send(http::verb::post, "/classify", kNewsletter);
  const std::string reported_scan(Json(classified).at("scan_id").as_string());
  const std::string copy = "X-Spam-Scan-Id: " + reported_scan + "; sig=" +
                           std::string(Json(classified).at("scan_signature").as_string()) + "\r\n" +
                           kNewsletter;
  ASSERT_EQ(Post(client, "/train?label=spam", kBob, copy).result(), http::status::ok);
  json::value state = LearnedOf(client, reported_scan);
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("how").as_string(), "scan_header");
  EXPECT_EQ(state.at("by").as_string(), "bob");
  EXPECT_EQ(state.at("as").as_string(), "spam");

  // A message classified under an id, then trained under that id: its scan is marked.
  const std::string by_id_scan = ScanOf(client, "?id=msg-77%40example.org", "cheap pills now");
  ASSERT_EQ(
      Post(client, "/train?label=ham&id=msg-77%40example.org", kAlice, "cheap pills now").result(),
      http::status::ok);
  state = LearnedWithChanges(client, by_id_scan, 1);
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("how").as_string(), "message_id");
  EXPECT_EQ(state.at("by").as_string(), "alice");
  EXPECT_EQ(state.at("as").as_string(), "ham");

  // The same bytes trained again with no id: the content id is the scan's key.
  const std::string bytes_scan = ScanOf(client, "", "review the quarterly report");
  ASSERT_EQ(Post(client, "/train?label=ham", kAlice, "review the quarterly report").result(),
            http::status::ok);
  state = LearnedWithChanges(client, bytes_scan, 1);
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("how").as_string(), "message");
  // And forgotten by id.
  ASSERT_EQ(Post(client, "/forget?id=msg-77%40example.org", kBob).result(), http::status::ok);
  state = LearnedWithChanges(client, by_id_scan, 2);
  EXPECT_EQ(state.at("state").as_string(), "forgotten") << state;
  EXPECT_EQ(state.at("by").as_string(), "bob");
}

// history_keep_subject and history_keep_recipients default to keep: a word of the subject finds
// the scan, case aside; a hashed one would need the whole subject.
TEST_F(HistoryTest, AWordOfTheSubjectOrSenderFindsTheScanByDefault) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string scan_id = ScanOf(client, "", kNewsletter);
  (void)ScanOf(client, "", "Subject: something else\r\n\r\nreview");
  for (const char* word : {"NEWSLETTER", "alert", "lists.example"}) {
    const json::value page = client.GetJson(std::string("/history?q=") + word);
    ASSERT_EQ(page.at("scans").as_array().size(), 1u) << word << ": " << page;
    EXPECT_EQ(page.at("scans").as_array()[0].at("scan_id").as_string(), scan_id);
    // Scans older than history_clear_facts_days keep hashes: the answer says so.
    EXPECT_THAT(std::string(page.at("notice").as_string()), HasSubstr("older than 7 days"));
  }
  const json::value recent = client.GetJson(
      "/history?q=newsletter&since=" +
      std::to_string(client.GetJson("/history/" + scan_id).at("time_ms").as_int64()));
  EXPECT_TRUE(recent.at("notice").is_null()) << recent;  // Within the clear days: nothing to say.
}

// Autolearn marks the scan it learned, by "autolearn", once its learn is durable.
TEST_F(LearnedHistoryTest, AnAutolearnedScanSaysSo) {
  // Every message counted (train_margin ""): under error-driven training autolearn only checks
  // a confident message scored beyond the margin (AutolearnTest).
  DaemonProcess daemon = Start({"--autolearn", "true", "--autolearn-spam-confidence", "0.9",
                                "--autolearn-ham-confidence", "0.1", "--train-margin", ""});
  HttpClient client(daemon.port());
  // Enough feedback of each class, of words of its own, for a calibrated spam_confidence.
  const char* spam_words[] = {"cheap", "pills", "winner", "prize", "casino", "free"};
  const char* ham_words[] = {"lunch", "meeting", "report", "agenda", "team", "notes"};
  const auto text_of = [](const char* const* words, int n) {
    std::string text;
    for (int i = 0; i < 6; ++i) text += std::string(words[(n + i * 5) % 6]) + " ";
    return text + "n" + std::to_string(n);
  };
  for (int i = 0; i < 30; ++i) {
    for (const auto& [label, words] :
         {std::pair{"spam", static_cast<const char* const*>(spam_words)},
          std::pair{"ham", static_cast<const char* const*>(ham_words)}}) {
      const auto trained =
          client.Send(http::verb::post,
                      std::string("/train?label=") + label + "&id=" + label + std::to_string(i),
                      text_of(words, i));
      ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
    }
  }
  const json::value classified = client.PostJson("/classify?id=auto-1", text_of(spam_words, 99));
  ASSERT_GE(classified.at("spam_confidence").as_double(), 0.9) << classified;
  const std::string scan_id(classified.at("scan_id").as_string());
  const json::value state = LearnedWithChanges(client, scan_id, 1);
  ASSERT_TRUE(state.is_object()) << state;
  EXPECT_EQ(state.at("how").as_string(), "autolearn");
  EXPECT_EQ(state.at("by").as_string(), "autolearn");
  EXPECT_EQ(state.at("as").as_string(), "spam");
}

}  // namespace
}  // namespace nbspamd::testing
