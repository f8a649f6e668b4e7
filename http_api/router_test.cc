// The HTTP API without sockets: requests in, responses out, against a real tokenizer and an
// in-memory store.
#include "http_api/router.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <cmath>

#include "storage/memory_store.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

class RouterTest : public ::testing::Test {
 protected:
  RouterTest()
      : filter_(std::make_unique<storage::MemoryStore>(), TextbookOptions()), router_(filter_) {}

  // The textbook model of shared/seed-examples.md: add-one smoothing, raw counts, every token
  // in the score, and a threshold below the seed's score (-0.3157) so that "review account",
  // more probable as spam, is labelled spam.
  static core::SpamFilterOptions TextbookOptions() {
    core::SpamFilterOptions options;
    options.alpha = 1.0;
    options.score_min_weight = 0;
    options.spam_threshold = -0.5;
    options.tokenizer.boolean_counts = false;
    return options;
  }

  Response Send(http::verb method, std::string target, std::string body = "",
                std::string content_type = "text/plain") {
    Request request(method, target, 11);
    if (!content_type.empty()) request.set(http::field::content_type, content_type);
    request.body() = std::move(body);
    request.prepare_payload();
    return router_.Handle(request);
  }

  json::object Json(const Response& response) {
    EXPECT_EQ(response[http::field::content_type], "application/json");
    return json::parse(response.body()).as_object();
  }

  // Expects an error response with `status` and JSON error code `code`.
  void ExpectError(const Response& response, http::status status, std::string_view code) {
    EXPECT_EQ(response.result(), status) << response.body();
    const json::object body = Json(response);
    ASSERT_TRUE(body.contains("error")) << response.body();
    EXPECT_EQ(body.at("error").at("code").as_string(), code);
    EXPECT_FALSE(body.at("error").at("message").as_string().empty());
  }

  void TrainSeed() {
    const std::pair<const char*, const char*> seed[] = {
        {"spam", "send us your password"}, {"spam", "review us"},
        {"spam", "send us your account"},  {"spam", "send your password"},
        {"ham", "password review"},        {"ham", "send us your review"}};
    for (const auto& [label, text] : seed) {
      const Response response = Send(http::verb::post, std::string("/train?label=") + label, text);
      ASSERT_EQ(response.result(), http::status::ok) << response.body();
    }
  }

  core::SpamFilter filter_;
  Router router_;
};

TEST_F(RouterTest, UsersTrainTheirOwnLayerAndCanBeListedAndDeleted) {
  TrainSeed();
  const std::string global = Send(http::verb::post, "/classify", "review account").body();
  // A user with no layer: the global answer, to the byte.
  EXPECT_EQ(Send(http::verb::post, "/classify?user=alice", "review account").body(), global);
  ExpectError(Send(http::verb::get, "/users/alice/stats"), http::status::not_found, "not_found");

  Response trained = Send(http::verb::post, "/train?label=ham&id=u1&user=alice", "review account");
  ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
  EXPECT_NE(Send(http::verb::post, "/classify?user=alice", "review account").body(), global);
  EXPECT_EQ(Send(http::verb::post, "/classify?user=bob", "review account").body(), global);
  EXPECT_EQ(Send(http::verb::post, "/classify", "review account").body(), global);
  // The JSON field works as the query parameter.
  EXPECT_EQ(Send(http::verb::post, "/classify", R"({"text": "review account", "user": "alice"})",
                 "application/json")
                .body(),
            Send(http::verb::post, "/classify?user=alice", "review account").body());

  const json::object stats = Json(Send(http::verb::get, "/users/alice/stats"));
  EXPECT_EQ(stats.at("user").as_string(), "alice");
  EXPECT_EQ(stats.at("documents").as_int64(), 1);
  EXPECT_EQ(stats.at("vocabulary").as_int64(), 2);
  EXPECT_EQ(stats.at("classes").as_array()[1].at("label").as_string(), "ham");
  EXPECT_EQ(stats.at("classes").as_array()[1].at("documents").as_int64(), 1);

  // Forget with the user restores the global answer exactly; without it, the global ledger has
  // no u1.
  ExpectError(Send(http::verb::post, "/forget?id=u1", ""), http::status::not_found, "not_found");
  ASSERT_EQ(Send(http::verb::post, "/forget?id=u1&user=alice", "").result(), http::status::ok);
  EXPECT_EQ(Send(http::verb::post, "/classify?user=alice", "review account").body(), global);

  trained = Send(http::verb::post, "/train?label=ham&user=alice", "review account");
  ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
  ExpectError(Send(http::verb::get, "/users/alice"), http::status::method_not_allowed,
              "method_not_allowed");
  const json::object deleted = Json(Send(http::verb::delete_, "/users/alice"));
  EXPECT_EQ(deleted.at("deleted").as_bool(), true);
  ExpectError(Send(http::verb::get, "/users/alice/stats"), http::status::not_found, "not_found");
  EXPECT_EQ(Send(http::verb::post, "/classify?user=alice", "review account").body(), global);
}

TEST_F(RouterTest, BadUserIdsAre400) {
  TrainSeed();
  const std::string too_long(300, 'u');
  ExpectError(Send(http::verb::post, "/classify?user=" + too_long, "review"),
              http::status::bad_request, "invalid_argument");
  ExpectError(Send(http::verb::post, "/classify?user=", "review"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::post, "/train?label=spam&user=" + too_long, "review"),
              http::status::bad_request, "invalid_argument");
  ExpectError(Send(http::verb::post, "/forget?id=x&user=", ""), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::get, "/users/a%00b/stats"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::delete_, "/users/" + too_long), http::status::bad_request,
              "invalid_argument");
  ExpectError(
      Send(http::verb::post, "/classify", R"({"text": "review", "user": 7})", "application/json"),
      http::status::bad_request, "invalid_argument");
}

TEST_F(RouterTest, SeedDocumentsGiveTheGoldenNumbers) {
  TrainSeed();
  const json::object body = Json(Send(http::verb::post, "/classify", "review account"));
  EXPECT_EQ(body.at("label").as_string(), "spam");
  EXPECT_NEAR(body.at("probability").to_number<double>(), 0.5154362416, 1e-9);
  EXPECT_NEAR(body.at("log_odds").to_number<double>(), 0.0617645943, 1e-9);
  // (ln(24/57) + ln(24/19)) / 2: model/classifier_test.cc.
  EXPECT_NEAR(body.at("score").to_number<double>(), -0.3156912932, 1e-9);
  EXPECT_EQ(body.at("scored_tokens").to_number<std::int64_t>(), 2);
  EXPECT_NEAR(body.at("probabilities").at("ham").to_number<double>(), 1 - 0.5154362416, 1e-9);
  EXPECT_EQ(body.at("tokens").as_int64(), 2);
  const json::object unseen = Json(Send(http::verb::post, "/classify", "review us now"));
  EXPECT_NEAR(unseen.at("probability").to_number<double>(), 0.5154362416, 1e-9);
  EXPECT_EQ(unseen.at("known_tokens").as_int64(), 2);
}

TEST_F(RouterTest, JsonBodiesWork) {
  const json::object learned =
      Json(Send(http::verb::post, "/train",
                R"({"text": "cheap pills", "label": "spam", "id": "m-1"})", "application/json"));
  EXPECT_EQ(learned.at("id").as_string(), "m-1");
  EXPECT_EQ(learned.at("status").as_string(), "learned");
  EXPECT_EQ(learned.at("tokens").as_int64(), 2);
  Send(http::verb::post, "/train", R"({"text": "meeting notes", "label": "ham"})",
       "application/json; charset=utf-8");
  const json::object verdict =
      Json(Send(http::verb::post, "/classify", R"({"text": "cheap pills"})", "application/json"));
  EXPECT_EQ(verdict.at("label").as_string(), "spam");
}

TEST_F(RouterTest, ExplainListsTokensWithSignedWeights) {
  TrainSeed();
  const json::object body =
      Json(Send(http::verb::post, "/classify?explain=1", "review account review"));
  const json::array& explain = body.at("explain").as_array();
  ASSERT_EQ(explain.size(), 1u);
  EXPECT_EQ(explain[0].at("token").as_string(), "review");
  EXPECT_EQ(explain[0].at("source").as_string(), "body");
  EXPECT_EQ(explain[0].at("count").as_int64(), 2);
  EXPECT_NEAR(explain[0].at("weight").to_number<double>(), 2 * -0.8649974374, 1e-9);
  ExpectError(Send(http::verb::post, "/classify?explain=x", "review"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::post, "/classify?explain=100000", "review"),
              http::status::bad_request, "invalid_argument");
}

TEST_F(RouterTest, RelearnAndForget) {
  TrainSeed();
  EXPECT_EQ(
      Json(Send(http::verb::post, "/train?label=spam&id=x", "free money")).at("status").as_string(),
      "learned");
  EXPECT_EQ(
      Json(Send(http::verb::post, "/train?label=spam&id=x", "free money")).at("status").as_string(),
      "unchanged");
  EXPECT_EQ(
      Json(Send(http::verb::post, "/train?label=ham&id=x", "free money")).at("status").as_string(),
      "relearned");
  const json::object forgotten = Json(Send(http::verb::post, "/forget?id=x", ""));
  EXPECT_EQ(forgotten.at("status").as_string(), "forgotten");
  ExpectError(Send(http::verb::post, "/forget?id=x", ""), http::status::not_found, "not_found");

  // Without an id, a message is known by its content.
  const json::object learned = Json(Send(http::verb::post, "/train?label=spam", "win a prize"));
  const json::object by_content = Json(Send(http::verb::post, "/forget", "win a prize"));
  EXPECT_EQ(by_content.at("id"), learned.at("id"));
  EXPECT_EQ(Json(Send(http::verb::get, "/stats")).at("documents").as_int64(), 6);
}

TEST_F(RouterTest, NewLabelCreatesAClass) {
  TrainSeed();
  Send(http::verb::post, "/train?label=newsletter", "weekly digest");
  const json::object stats = Json(Send(http::verb::get, "/stats"));
  const json::array& classes = stats.at("classes").as_array();
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[2].at("label").as_string(), "newsletter");
  EXPECT_EQ(stats.at("vocabulary").as_int64(), 8);
  EXPECT_EQ(stats.at("alpha").to_number<double>(), 1.0);
  EXPECT_EQ(stats.at("options").at("boolean_counts").as_bool(), false);
}

TEST_F(RouterTest, ClassifyAnswersTheVerdictBesideTheLabel) {
  TrainSeed();
  // The textbook thresholds (both 0): "review account" (score 0.0309) is spam, "review" ham.
  json::object body = Json(Send(http::verb::post, "/classify", "review account"));
  EXPECT_EQ(body.at("label").as_string(), "spam");
  EXPECT_EQ(body.at("verdict").as_string(), "spam");
  body = Json(Send(http::verb::post, "/classify", "review"));
  EXPECT_EQ(body.at("label").as_string(), "ham");
  EXPECT_EQ(body.at("verdict").as_string(), "ham");
}

TEST(RouterThresholdsTest, BetweenTheThresholdsTheVerdictIsUnsure) {
  core::SpamFilterOptions options;
  options.alpha = 1;
  options.score_min_weight = 0;
  options.spam_threshold = -0.3;
  options.ham_threshold = -0.5;
  options.tokenizer.boolean_counts = false;
  core::SpamFilter filter(std::make_unique<storage::MemoryStore>(), options);
  Router router(filter);
  const auto send = [&](http::verb method, const std::string& target, const std::string& body) {
    Request request(method, target, 11);
    request.set(http::field::content_type, "text/plain");
    request.body() = body;
    request.prepare_payload();
    return router.Handle(request);
  };
  for (const auto& [label, text] : {std::pair{"spam", "send us your password"},
                                    {"spam", "review us"},
                                    {"spam", "send us your account"},
                                    {"spam", "send your password"},
                                    {"ham", "password review"},
                                    {"ham", "send us your review"}}) {
    ASSERT_EQ(send(http::verb::post, std::string("/train?label=") + label, text).result(),
              http::status::ok);
  }
  // Score -0.3157: above ham_threshold -0.5, not above spam_threshold -0.3.
  const Response response = send(http::verb::post, "/classify", "review account");
  const json::object body = json::parse(response.body()).as_object();
  EXPECT_EQ(body.at("label").as_string(), "spam") << "the label is the most probable class";
  EXPECT_EQ(body.at("verdict").as_string(), "unsure");
  EXPECT_THAT(response.body(), HasSubstr(R"("label":"spam","verdict":"unsure","probability":)"));
  EXPECT_EQ(
      json::parse(send(http::verb::post, "/classify", "review").body()).at("verdict").as_string(),
      "ham");
  EXPECT_EQ(
      json::parse(send(http::verb::post, "/classify", "account").body()).at("verdict").as_string(),
      "spam");
  const Response stats = send(http::verb::get, "/stats", "");
  EXPECT_THAT(stats.body(), HasSubstr(R"("alpha":1,"spam_threshold":-0.3,"ham_threshold":-0.5,)"));
}

TEST_F(RouterTest, NumbersAreWrittenAsPeopleWriteThem) {
  TrainSeed();
  const Response response = Send(http::verb::post, "/classify?explain=1", "review account");
  // Shortest round-trip decimals, never Boost.JSON's own "5.154362416107382E-1".
  EXPECT_THAT(response.body(), HasSubstr(R"("probability":0.5154362416107)"));
  EXPECT_THAT(response.body(), Not(HasSubstr("E-")));
  EXPECT_THAT(response.body(), Not(HasSubstr("E0")));
  EXPECT_NEAR(Json(response).at("probability").to_number<double>(), 0.5154362416, 1e-9);
  EXPECT_THAT(Send(http::verb::get, "/stats").body(), HasSubstr(R"("alpha":1,)"));
}

TEST_F(RouterTest, ClassifyBeforeTrainingIsAConflict) {
  ExpectError(Send(http::verb::post, "/classify", "hello"), http::status::conflict,
              "failed_precondition");
}

TEST_F(RouterTest, BadRequestsGetClearJsonErrors) {
  ExpectError(Send(http::verb::post, "/train", "{not json", "application/json"),
              http::status::bad_request, "invalid_json");
  ExpectError(Send(http::verb::post, "/train", "[1, 2]", "application/json"),
              http::status::bad_request, "invalid_json");
  ExpectError(Send(http::verb::post, "/train", R"({"text": "x"})", "application/json"),
              http::status::bad_request, "invalid_argument");
  ExpectError(
      Send(http::verb::post, "/train", R"({"text": 5, "label": "spam"})", "application/json"),
      http::status::bad_request, "invalid_argument");
  ExpectError(Send(http::verb::post, "/train", R"({"text": "x", "label": "spam", "colour": 1})",
                   "application/json"),
              http::status::bad_request, "invalid_argument");
  ExpectError(Send(http::verb::post, "/train", "text"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::post, "/train?label=sp%20am", "text"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::post, "/train?label=spam&id=" + std::string(300, 'i'), "text"),
              http::status::bad_request, "invalid_argument");
  ExpectError(Send(http::verb::post, "/train?label=spam", ""), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::post, "/train?label=spam&label=ham", "text"),
              http::status::bad_request, "invalid_argument");
  ExpectError(Send(http::verb::post, "/train?lable=spam", "text"), http::status::bad_request,
              "invalid_argument");
  ExpectError(Send(http::verb::post, "/classify", "\x89PNG", "image/png"),
              http::status::unsupported_media_type, "unsupported_media_type");
  ExpectError(Send(http::verb::post, "/forget", ""), http::status::bad_request, "invalid_argument");
}

TEST_F(RouterTest, UnknownPathAndWrongMethod) {
  ExpectError(Send(http::verb::get, "/nothing"), http::status::not_found, "not_found");
  const Response response = Send(http::verb::get, "/classify");
  ExpectError(response, http::status::method_not_allowed, "method_not_allowed");
  EXPECT_EQ(response[http::field::allow], "POST");
  const Response deleted = Send(http::verb::delete_, "/stats");
  ExpectError(deleted, http::status::method_not_allowed, "method_not_allowed");
  EXPECT_EQ(deleted[http::field::allow], "GET, HEAD");
  // HEAD is a GET here; the transport leaves the body out (http_server/head_response.h).
  const Response head = Send(http::verb::head, "/stats");
  EXPECT_EQ(head.result(), http::status::ok);
  EXPECT_EQ(head.body(), Send(http::verb::get, "/stats").body());
  ExpectError(Send(http::verb::head, "/classify"), http::status::method_not_allowed,
              "method_not_allowed");
}

// Neither Content-Length nor chunking: an empty body (RFC 9112, 6.3), as `curl -X POST` sends.
TEST_F(RouterTest, PostWithoutLengthHasAnEmptyBody) {
  Request classify(http::verb::post, "/classify", 11);
  ASSERT_FALSE(classify.has_content_length());
  ExpectError(router_.Handle(classify), http::status::bad_request, "invalid_argument");
  Request forget(http::verb::post, "/forget?id=never-learned", 11);
  ExpectError(router_.Handle(forget), http::status::not_found, "not_found");
}

TEST_F(RouterTest, HealthAnswersOk) {
  const Response response = Send(http::verb::get, "/healthz");
  EXPECT_EQ(response.result(), http::status::ok);
  EXPECT_EQ(Json(response).at("status").as_string(), "ok");
}

}  // namespace
}  // namespace nbspamd::http_api
