// What the model knows, through the real daemon (docs/API.md "The model"): GET /model/token (a
// token's counts, probabilities, weight and user layers, looked up by text, typed word or hash),
// GET /model/strongest (the strongest tokens of spam and ham) and GET /model/thresholds (what a
// threshold pair would have done to the held-out feedback). The golden numbers of the maths are in
// model/threshold_outcomes_test.cc; here, that the daemon answers with them consistently.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

class ModelKnowledgeTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    return StartTestDaemon(data_.Join("model"), extra);
  }
  // Six spams about cheap viagra and six hams about the meeting agenda (plain text: body words),
  // one spam as mail with the Subject "viagra", and one spam in alice's layer; every one counted
  // (count=all: an archive import), so the counts below are the examples'.
  static void Train(HttpClient& client) {
    for (int i = 0; i < 6; ++i) {
      const std::string n = std::to_string(i);
      const auto spam = client.Send(http::verb::post, "/train?count=all&label=spam&id=s" + n,
                                    "cheap viagra offer number" + n + " buy now");
      ASSERT_EQ(spam.result(), http::status::ok) << spam.body();
      const auto ham = client.Send(http::verb::post, "/train?count=all&label=ham&id=h" + n,
                                   "the meeting agenda for monday item" + n + " see you");
      ASSERT_EQ(ham.result(), http::status::ok) << ham.body();
    }
    const auto mail = client.Send(http::verb::post, "/train?count=all&label=spam&id=m1",
                                  "Subject: viagra\r\nFrom: a@example.org\r\n\r\ncheap pills\r\n");
    ASSERT_EQ(mail.result(), http::status::ok) << mail.body();
    const auto alice =
        client.Send(http::verb::post, "/train?label=spam&id=a1&user=alice", "viagra for alice");
    ASSERT_EQ(alice.result(), http::status::ok) << alice.body();
  }
  static const json::object* Find(const json::array& tokens, std::string_view text) {
    for (const json::value& token : tokens) {
      if (token.at("token").is_string() && token.at("token").as_string() == text) {
        return &token.as_object();
      }
    }
    return nullptr;
  }
  TempDir data_;
};

// viagra: counted in the six plain spams (the mail's body says "cheap pills"), in no ham. Its
// P(w|c) are (n_wc + alpha) / (n_c + alpha·|V|) with the classes, |V| and alpha of the same
// answer, and its weight is the one /classify's explanation gives a message holding it once.
TEST_F(ModelKnowledgeTest, ATokensCountsProbabilitiesAndWeightAreTheClassifiers) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  Train(client);
  const json::value answer = client.GetJson("/model/token?text=viagra");
  const json::array& tokens = answer.at("tokens").as_array();
  ASSERT_EQ(tokens.size(), 1u);
  const json::object& viagra = tokens[0].as_object();
  EXPECT_EQ(viagra.at("token").as_string(), "viagra");
  EXPECT_EQ(viagra.at("hash").as_string().size(), 16u);
  EXPECT_TRUE(viagra.at("known").as_bool());
  EXPECT_EQ(viagra.at("counts").at("spam").to_number<std::int64_t>(), 6);
  EXPECT_EQ(viagra.at("counts").at("ham").to_number<std::int64_t>(), 0);
  const double alpha = answer.at("alpha").to_number<double>();
  const double vocabulary = answer.at("vocabulary").to_number<double>();
  const double spam_tokens = answer.at("classes").at("spam").at("tokens").to_number<double>();
  const double ham_tokens = answer.at("classes").at("ham").at("tokens").to_number<double>();
  const double p_spam = (6 + alpha) / (spam_tokens + alpha * vocabulary);
  const double p_ham = (0 + alpha) / (ham_tokens + alpha * vocabulary);
  EXPECT_DOUBLE_EQ(viagra.at("probabilities").at("spam").to_number<double>(), p_spam);
  EXPECT_DOUBLE_EQ(viagra.at("probabilities").at("ham").to_number<double>(), p_ham);
  const double weight = viagra.at("weight").to_number<double>();
  EXPECT_NEAR(weight, std::log(p_spam) - std::log(p_ham), 1e-9);

  const json::value classified =
      client.PostJson("/classify?explain=5", R"({"text":"viagra"})", "application/json");
  // The word and its character 4-grams, each learned from the same six spams.
  const json::array& explain = classified.at("explain").as_array();
  ASSERT_EQ(explain.size(), 4u) << json::serialize(classified);
  const json::object* word = Find(explain, "viagra");
  ASSERT_NE(word, nullptr) << json::serialize(classified);
  EXPECT_EQ(word->at("weight").to_number<double>(), weight);  // The same computation.
  for (const char* gram : {"#viag", "#iagr", "#agra"}) {
    EXPECT_NE(Find(explain, gram), nullptr) << gram;
  }

  // Alice's layer holds it once, in spam.
  const json::array& users = viagra.at("users").as_array();
  ASSERT_EQ(users.size(), 1u) << json::serialize(viagra);
  EXPECT_EQ(users[0].at("user").as_string(), "alice");
  EXPECT_EQ(users[0].at("counts").at("spam").to_number<std::int64_t>(), 1);
  EXPECT_EQ(answer.at("users_examined").to_number<std::int64_t>(), 1);
  EXPECT_FALSE(answer.at("users_truncated").as_bool());

  // By hash: the same counts (and, once a scan named it, its text).
  const json::value by_hash =
      client.GetJson("/model/token?hash=" + std::string(viagra.at("hash").as_string()));
  EXPECT_EQ(by_hash.at("tokens").at(0).at("counts"), viagra.at("counts"));
  EXPECT_EQ(by_hash.at("tokens").at(0).at("token").as_string(), "viagra");  // The scan above.

  // A token never seen: all counts 0, not known, still a weight (that of an unseen token).
  const json::value unseen = client.GetJson("/model/token?text=zyzzyva");
  EXPECT_FALSE(unseen.at("tokens").at(0).at("known").as_bool());
  EXPECT_TRUE(unseen.at("tokens").at(0).at("users").as_array().empty());
}

// A word as typed: "Viagra" is the body token viagra and its header variants; subject:viagra was
// learned once (the mail), the other variants never.
TEST_F(ModelKnowledgeTest, AWordGivesTheTokensTheTokenizerMakesOfIt) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  Train(client);
  const json::value answer = client.GetJson("/model/token?word=Viagra");
  const json::array& tokens = answer.at("tokens").as_array();
  const json::object* body = Find(tokens, "viagra");
  ASSERT_NE(body, nullptr) << json::serialize(answer);
  EXPECT_EQ(body->at("source").as_string(), "body");
  EXPECT_EQ(body->at("counts").at("spam").to_number<std::int64_t>(), 6);
  const json::object* subject = Find(tokens, "subject:viagra");
  ASSERT_NE(subject, nullptr) << json::serialize(answer);
  EXPECT_EQ(subject->at("source").as_string(), "header");
  EXPECT_EQ(subject->at("counts").at("spam").to_number<std::int64_t>(), 1);
  EXPECT_TRUE(subject->at("known").as_bool());
  const json::object* head = Find(tokens, "head:viagra");
  ASSERT_NE(head, nullptr) << json::serialize(answer);
  EXPECT_FALSE(head->at("known").as_bool());
  EXPECT_EQ(tokens[0].at("token").as_string(), "viagra");  // Body words first,
  const json::object* gram = Find(tokens, "#viag");        // then their n-grams.
  ASSERT_NE(gram, nullptr) << json::serialize(answer);
  EXPECT_EQ(gram->at("counts").at("spam").to_number<std::int64_t>(), 6);
  EXPECT_NE(Find(tokens, "subject:#viag"), nullptr);

  // Two words: both, each with its variants.
  const json::value two = client.GetJson("/model/token?word=meeting%20agenda");
  EXPECT_NE(Find(two.at("tokens").as_array(), "meeting"), nullptr);
  EXPECT_NE(Find(two.at("tokens").as_array(), "subject:agenda"), nullptr);
  // Punctuation only: no token.
  EXPECT_TRUE(client.GetJson("/model/token?word=%21%21").at("tokens").as_array().empty());
}

TEST_F(ModelKnowledgeTest, ALookupWithoutOneTextOrWithABadOneIsRefused) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  Train(client);
  for (const char* target :
       {"/model/token", "/model/token?text=", "/model/token?text=a&word=a", "/model/token?hash=123",
        "/model/token?hash=zzzzzzzzzzzzzzzz", "/model/token?txt=a"}) {
    const auto answer = client.Send(http::verb::get, target, "");
    EXPECT_EQ(answer.result(), http::status::bad_request) << target << " " << answer.body();
    const json::value body = json::parse(answer.body());
    EXPECT_EQ(body.at("error").at("code").as_string(), "invalid_argument") << target;
  }
  const std::string long_text(1025, 'a');
  EXPECT_EQ(client.Send(http::verb::get, "/model/token?text=" + long_text, "").result(),
            http::status::bad_request);
  EXPECT_EQ(client.Send(http::verb::post, "/model/token?text=a", "").result(),
            http::status::method_not_allowed);
}

// The strongest spam tokens: weight > 0, largest first, each counted at least min_count times;
// viagra (6 spams, no ham) is among them, named by its text (a scan of the history holds it).
TEST_F(ModelKnowledgeTest, TheStrongestTokensFollowTheRule) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  const auto early = client.Send(http::verb::get, "/model/strongest?class=spam", "");
  EXPECT_EQ(early.result(), http::status::conflict) << early.body();
  Train(client);
  ASSERT_EQ(client.Send(http::verb::post, "/classify?explain=3", "cheap viagra").result(),
            http::status::ok);
  const json::value spam = client.GetJson("/model/strongest?class=spam&limit=5&min_count=6");
  const json::array& tokens = spam.at("tokens").as_array();
  ASSERT_FALSE(tokens.empty()) << json::serialize(spam);
  EXPECT_LE(tokens.size(), 5u);
  double last = 1e300;
  for (const json::value& token : tokens) {
    const double weight = token.at("weight").to_number<double>();
    EXPECT_GT(weight, 0);
    EXPECT_LE(weight, last);
    last = weight;
    EXPECT_GE(
        token.at("spam").to_number<std::int64_t>() + token.at("ham").to_number<std::int64_t>(), 6);
  }
  const json::object* viagra = Find(tokens, "viagra");
  ASSERT_NE(viagra, nullptr) << json::serialize(spam);
  EXPECT_EQ(viagra->at("spam").to_number<std::int64_t>(), 6);
  EXPECT_GE(spam.at("scans_read").to_number<std::int64_t>(), 1);
  EXPECT_EQ(spam.at("min_count").to_number<std::int64_t>(), 6);

  const json::value ham = client.GetJson("/model/strongest?class=ham&limit=50");
  for (const json::value& token : ham.at("tokens").as_array()) {
    EXPECT_LT(token.at("weight").to_number<double>(), 0);
    EXPECT_GE(
        token.at("spam").to_number<std::int64_t>() + token.at("ham").to_number<std::int64_t>(),
        5);  // The default min_count.
  }
  for (const char* target :
       {"/model/strongest", "/model/strongest?class=unsure", "/model/strongest?class=spam&limit=0",
        "/model/strongest?class=spam&limit=501", "/model/strongest?class=spam&min_count=x"}) {
    const auto answer = client.Send(http::verb::get, target, "");
    EXPECT_EQ(answer.result(), http::status::bad_request) << target << " " << answer.body();
  }
}

// The pair's counts split each class's held-out scores three ways; the thresholds in force are
// "current"; a two-way pair has no unsure; the curve gives any pair's counts.
TEST_F(ModelKnowledgeTest, ThresholdsGiveWhatAPairWouldHaveDone) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  Train(client);
  const json::value answer = client.GetJson("/model/thresholds?spam=0.5&ham=-0.5");
  const std::int64_t hams = answer.at("hams").to_number<std::int64_t>();
  const std::int64_t spams = answer.at("spams").to_number<std::int64_t>();
  EXPECT_GT(hams, 0) << json::serialize(answer);
  EXPECT_GT(spams, 0) << json::serialize(answer);
  const json::object& pair = answer.at("pair").as_object();
  EXPECT_DOUBLE_EQ(pair.at("spam_threshold").to_number<double>(), 0.5);
  EXPECT_DOUBLE_EQ(pair.at("ham_threshold").to_number<double>(), -0.5);
  for (const char* side : {"hams", "spams"}) {
    const json::object& counts = pair.at(side).as_object();
    EXPECT_EQ(counts.at("total").to_number<std::int64_t>(), side[0] == 'h' ? hams : spams);
    EXPECT_EQ(counts.at("spam").to_number<std::int64_t>() +
                  counts.at("unsure").to_number<std::int64_t>() +
                  counts.at("ham").to_number<std::int64_t>(),
              counts.at("total").to_number<std::int64_t>());
  }
  // The curve at 0.5 and -0.5 gives the same counts.
  std::int64_t hams_above_spam_threshold = -1, spams_at_or_below_ham_threshold = -1;
  std::int64_t previous_hams = hams, previous_spams = 0;
  for (const json::value& point : answer.at("curve").as_array()) {
    const double t = point.at("threshold").to_number<double>();
    const std::int64_t above = point.at("hams_above").to_number<std::int64_t>();
    const std::int64_t below = point.at("spams_at_or_below").to_number<std::int64_t>();
    EXPECT_LE(above, previous_hams);
    EXPECT_GE(below, previous_spams);
    previous_hams = above;
    previous_spams = below;
    if (std::fabs(t - 0.5) < 1e-9) hams_above_spam_threshold = above;
    if (std::fabs(t + 0.5) < 1e-9) spams_at_or_below_ham_threshold = below;
  }
  EXPECT_EQ(pair.at("hams").at("spam").to_number<std::int64_t>(), hams_above_spam_threshold);
  EXPECT_EQ(pair.at("spams").at("ham").to_number<std::int64_t>(), spams_at_or_below_ham_threshold);
  EXPECT_EQ(answer.at("curve").as_array().size(), 41u);  // -2.0 to 2.0 by 0.1.

  // Without a pair: the thresholds in force, the defaults here.
  const json::value current = client.GetJson("/model/thresholds");
  EXPECT_EQ(current.at("pair"), current.at("current"));
  EXPECT_DOUBLE_EQ(current.at("current").at("spam_threshold").to_number<double>(), 0.9);
  EXPECT_DOUBLE_EQ(current.at("current").at("ham_threshold").to_number<double>(), -0.6);
  const json::value two_way = client.GetJson("/model/thresholds?spam=0.2&ham=0.2");
  EXPECT_EQ(two_way.at("pair").at("hams").at("unsure").to_number<std::int64_t>(), 0);
  EXPECT_EQ(two_way.at("pair").at("spams").at("unsure").to_number<std::int64_t>(), 0);

  for (const char* target :
       {"/model/thresholds?spam=0&ham=1", "/model/thresholds?spam=x", "/model/thresholds?ham=inf",
        "/model/thresholds?spam=", "/model/thresholds?both=1"}) {
    const auto bad = client.Send(http::verb::get, target, "");
    EXPECT_EQ(bad.result(), http::status::bad_request) << target << " " << bad.body();
  }
}

TEST_F(ModelKnowledgeTest, TheModelEndpointsFollowAuthClassify) {
  DaemonProcess daemon =
      Start({"--auth-tokens", "admin:model-test-secret-12", "--auth-classify", "true"});
  HttpClient client(daemon.port());
  for (const char* target :
       {"/model/token?text=a", "/model/strongest?class=spam", "/model/thresholds"}) {
    EXPECT_EQ(client.Send(http::verb::get, target, "").result(), http::status::unauthorized)
        << target;
  }
}

}  // namespace
}  // namespace nbspamd::testing
