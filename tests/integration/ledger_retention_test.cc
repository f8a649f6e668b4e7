// The ledger retention through the real daemon (docs/STORAGE.md "Ledger retention"):
// POST /admin/retire retires old ledger records into the base counts while the daemon serves;
// POST /admin/expire then drops rare tokens no live record holds;
// no score or figure of /stats changes, a forget of a retired message gets 410 `expired`, the
// metric counts them, and `nbspamd check` finds every invariant holding afterwards. A user's layer
// retires and expires by the same rules, with the same answers.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr char kRetentionSecret[] = "retention-test-secret-1";
const std::vector<std::string> kProbes = {
    "Subject: cheap pills\n\ncheap pills now, click here",
    "Subject: agenda\n\nthe meeting agenda for friday, review the notes"};

class LedgerRetentionTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "--listen",  "127.0.0.1:0", "--data-dir",    dir_.Join("model"),
        "--threads", "2",           "--auth-tokens", std::string("admin:") + kRetentionSecret};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  static HttpResponse Admin(HttpClient& client, http::verb verb, const std::string& target,
                            const std::string& body = "") {
    return client.Send(verb, target, body, "text/plain",
                       {{"Authorization", std::string("Bearer ") + kRetentionSecret}});
  }

  // /stats and the scores of the probes.
  static std::string Fingerprint(HttpClient& client) {
    std::string text = json::serialize(client.GetJson("/stats"));
    for (const std::string& probe : kProbes) {
      text += "\n" + json::serialize(client.PostJson("/classify?explain=0", probe).at("score"));
    }
    return text;
  }

  TempDir dir_;
};

TEST_F(LedgerRetentionTest, RetiredMessagesKeepTheirCountsButCannotBeForgotten) {
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    const std::pair<const char*, const char*> training[] = {
        {"/train?label=spam&id=s1", "Subject: pills\n\ncheap pills, click now"},
        {"/train?label=spam&id=s2", "Subject: win\n\nwin money now, click"},
        {"/train?label=ham&id=h1", "Subject: notes\n\nmeeting notes and the agenda"},
        {"/train?label=ham&id=h2", "Subject: lunch\n\nlunch on friday with the team"}};
    for (const auto& [target, body] : training) {
      const HttpResponse trained = Admin(client, http::verb::post, target, body);
      ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
    }
    const std::string fingerprint = Fingerprint(client);

    // Refused: without the token, without a horizon, with both, with a bad one.
    EXPECT_EQ(client.Send(http::verb::post, "/admin/retire?older_than_days=1").result(),
              http::status::unauthorized);
    for (const char* bad : {"/admin/retire", "/admin/retire?older_than_days=1&before=5",
                            "/admin/retire?older_than_days=-1", "/admin/retire?before=soon",
                            "/admin/retire?older_than_days=36501", "/admin/retire?days=3"}) {
      const HttpResponse refused = Admin(client, http::verb::post, bad);
      EXPECT_EQ(refused.result(), http::status::bad_request) << bad << ": " << refused.body();
      EXPECT_NE(refused.body().find("\"error\""), std::string::npos) << refused.body();
    }
    // Nothing is a day old yet.
    HttpResponse retired = Admin(client, http::verb::post, "/admin/retire?older_than_days=1");
    ASSERT_EQ(retired.result(), http::status::ok) << retired.body();
    EXPECT_EQ(json::parse(retired.body()).at("retired").as_int64(), 0);

    // No token expires while live ledger records hold every one.
    const std::string before = std::to_string(std::time(nullptr) + 60);
    HttpResponse expired =
        Admin(client, http::verb::post, "/admin/expire?max_count=0&before=" + before);
    ASSERT_EQ(expired.result(), http::status::ok) << expired.body();
    EXPECT_EQ(json::parse(expired.body()).at("dropped").as_int64(), 0);

    // Everything learned before a minute from now: all four.
    retired = Admin(client, http::verb::post, "/admin/retire?before=" + before);
    ASSERT_EQ(retired.result(), http::status::ok) << retired.body();
    const json::value answer = json::parse(retired.body());
    EXPECT_EQ(answer.at("retired").as_int64(), 4);
    EXPECT_TRUE(answer.at("learned_before").as_string().ends_with("Z")) << retired.body();
    EXPECT_EQ(Fingerprint(client), fingerprint);

    const HttpResponse forget = Admin(client, http::verb::post, "/forget?id=s1", "");
    EXPECT_EQ(forget.result(), http::status::gone) << forget.body();
    const json::value error = json::parse(forget.body()).at("error");
    EXPECT_EQ(error.at("code").as_string(), "expired") << forget.body();
    EXPECT_NE(error.at("message").as_string().find("ledger retention"), std::string::npos)
        << forget.body();
    const HttpResponse relabel =
        Admin(client, http::verb::post, "/train?label=ham&id=s2", "Subject: win\n\nwin money");
    EXPECT_EQ(relabel.result(), http::status::gone) << relabel.body();
    EXPECT_EQ(Fingerprint(client), fingerprint);

    // Now the tokens counted once can expire; the rest stay, and so do the documents.
    const json::value stats = client.GetJson("/stats");
    const std::int64_t vocabulary = stats.at("vocabulary").as_int64();
    expired = Admin(client, http::verb::post, "/admin/expire?max_count=1&before=" + before);
    ASSERT_EQ(expired.result(), http::status::ok) << expired.body();
    const std::int64_t dropped = json::parse(expired.body()).at("dropped").as_int64();
    EXPECT_GT(dropped, 0);
    EXPECT_LT(dropped, vocabulary);
    const json::value after = client.GetJson("/stats");
    EXPECT_EQ(after.at("vocabulary").as_int64(), vocabulary - dropped);
    EXPECT_EQ(json::serialize(after.at("classes").at(0).at("documents")),
              json::serialize(stats.at("classes").at(0).at("documents")));
    EXPECT_EQ(after.at("expiry").at("token_cap").as_int64(), 0);
    EXPECT_EQ(Admin(client, http::verb::post, "/admin/expire?max_count=x&before=1").result(),
              http::status::bad_request);

    const std::string metrics = client.Send(http::verb::get, "/metrics").body();
    EXPECT_NE(metrics.find("\nnbspamd_ledger_retired_total 4\n"), std::string::npos);
    EXPECT_NE(
        metrics.find("\nnbspamd_expiry_tokens_dropped_total " + std::to_string(dropped) + "\n"),
        std::string::npos);
    daemon.Terminate();
  }
  const ProcessExit check = RunToExit({"check", "--data-dir", dir_.Join("model")});
  EXPECT_EQ(check.status, 0) << check.output;

  // The settings start the hourly pass, and /stats shows them.
  DaemonProcess daemon = Start({"--ledger-retention-days", "30", "--token-expiry-days", "90",
                                "--token-expiry-max-count", "2", "--token-cap", "1000000"});
  HttpClient client(daemon.port());
  const json::value expiry = client.GetJson("/stats").at("expiry");
  EXPECT_EQ(expiry.at("ledger_retention_days").as_int64(), 30);
  EXPECT_EQ(expiry.at("token_expiry_days").as_int64(), 90);
  EXPECT_EQ(expiry.at("token_expiry_max_count").as_int64(), 2);
  EXPECT_EQ(expiry.at("token_expiry_min_messages").as_int64(), 20000);  // The default.
  EXPECT_EQ(expiry.at("token_cap").as_int64(), 1000000);
  EXPECT_TRUE(expiry.at("token_keep_ham").as_bool());  // The default.
  // No pass yet: the age rule has not waited.
  EXPECT_NE(
      client.Send(http::verb::get, "/metrics").body().find("\nnbspamd_expiry_age_rule_waiting 0\n"),
      std::string::npos);
  EXPECT_EQ(json::parse(Admin(client, http::verb::post, "/admin/retire?older_than_days=0").body())
                .at("retired")
                .as_int64(),
            0);
  daemon.Terminate();
}

TEST_F(LedgerRetentionTest, AUserLayerRetiresAndExpiresByTheSameRules) {
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    const std::pair<const char*, const char*> training[] = {
        {"/train?label=spam&id=g1", "Subject: pills\n\ncheap pills, click now"},
        {"/train?label=ham&id=g2", "Subject: notes\n\nmeeting notes and the agenda"},
        {"/train?label=spam&id=u1&user=alice", "Subject: offer\n\nrare watches offer"},
        {"/train?label=ham&id=u2&user=alice", "Subject: lunch\n\nlunch on friday"}};
    for (const auto& [target, body] : training) {
      const HttpResponse trained = Admin(client, http::verb::post, target, body);
      ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
    }
    const json::value user_stats = client.GetJson("/users/alice/stats");
    const std::string probe = "Subject: offer\n\nrare lunch offer on friday";
    const std::string score =
        json::serialize(client.PostJson("/classify?explain=0&user=alice", probe).at("score"));

    // Everything learned before a minute from now: the two global records and alice's two.
    const std::string before = std::to_string(std::time(nullptr) + 60);
    const HttpResponse retired = Admin(client, http::verb::post, "/admin/retire?before=" + before);
    ASSERT_EQ(retired.result(), http::status::ok) << retired.body();
    EXPECT_EQ(json::parse(retired.body()).at("retired").as_int64(), 4);
    EXPECT_EQ(json::serialize(client.GetJson("/users/alice/stats")), json::serialize(user_stats));
    EXPECT_EQ(json::serialize(client.PostJson("/classify?explain=0&user=alice", probe).at("score")),
              score);

    // A retired user record can be neither forgotten nor relabelled: 410 `expired`.
    const HttpResponse forget = Admin(client, http::verb::post, "/forget?id=u1&user=alice", "");
    EXPECT_EQ(forget.result(), http::status::gone) << forget.body();
    EXPECT_EQ(json::parse(forget.body()).at("error").at("code").as_string(), "expired");
    const HttpResponse relabel =
        Admin(client, http::verb::post, "/train?label=ham&id=u1&user=alice", training[2].second);
    EXPECT_EQ(relabel.result(), http::status::gone) << relabel.body();

    // Carol learns alice's ham message, live: her layer's vocabulary is that message's tokens.
    ASSERT_EQ(
        Admin(client, http::verb::post, "/train?label=ham&id=c1&user=carol", training[3].second)
            .result(),
        http::status::ok);
    const std::int64_t ham_tokens =
        client.GetJson("/users/carol/stats").at("vocabulary").as_int64();
    ASSERT_GT(ham_tokens, 0);

    // Every token of alice's is counted at most twice (the header's structure tokens are in both
    // messages) and held by no live record. By her layer's own rule, with token_keep_ham (the
    // default), the ones her ham counts stay and the others go; her documents stay. Carol's
    // tokens are held by her live record.
    const HttpResponse expired =
        Admin(client, http::verb::post, "/admin/expire?max_count=2&before=" + before);
    ASSERT_EQ(expired.result(), http::status::ok) << expired.body();
    const json::value answer = json::parse(expired.body());
    const std::int64_t from_users = answer.at("dropped_from_users").as_int64();
    EXPECT_EQ(from_users, user_stats.at("vocabulary").as_int64() - ham_tokens) << expired.body();
    EXPECT_GT(from_users, 0);
    const json::value after = client.GetJson("/users/alice/stats");
    EXPECT_EQ(after.at("vocabulary").as_int64(), ham_tokens);
    EXPECT_EQ(after.at("documents").as_int64(), 2);
    EXPECT_EQ(client.GetJson("/users/carol/stats").at("vocabulary").as_int64(), ham_tokens);

    const std::string metrics = client.Send(http::verb::get, "/metrics").body();
    EXPECT_NE(metrics.find("\nnbspamd_ledger_retired_total 2\n"), std::string::npos);
    EXPECT_NE(metrics.find("\nnbspamd_user_ledger_retired_total 2\n"), std::string::npos);
    EXPECT_NE(metrics.find("\nnbspamd_user_expiry_tokens_dropped_total " +
                           std::to_string(from_users) + "\n"),
              std::string::npos);
    daemon.Terminate();
  }
  const ProcessExit check = RunToExit({"check", "--data-dir", dir_.Join("model")});
  EXPECT_EQ(check.status, 0) << check.output;
}

}  // namespace
}  // namespace nbspamd::testing
