// Per-user layers through the real daemon: ?user= on /classify, /train and /forget,
// GET /users/{id}/stats and DELETE /users/{id}, with the RocksDB store.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/seed_examples.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr char kMessage[] = "review account";

class UserLayersTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--listen",          "127.0.0.1:0", "--data-dir",
                                     data_.Join("model"), "--threads",   "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  static void TrainSeed(HttpClient& client) { TrainSeedExamples(client); }

  // The whole /classify answer: equal texts are equal scores, to the last digit.
  static std::string Classify(HttpClient& client, const std::string& query = "") {
    const auto response = client.Send(http::verb::post, "/classify" + query, kMessage);
    EXPECT_EQ(response.result(), http::status::ok) << response.body();
    return WithoutScanId(response.body());
  }

  static void Train(HttpClient& client, const std::string& query, const std::string& text) {
    const auto response = client.Send(http::verb::post, "/train" + query, text);
    ASSERT_EQ(response.result(), http::status::ok) << response.body();
  }

  TempDir data_;
};

TEST_F(UserLayersTest, AUsersTrainingMovesOnlyTheirScoreAndForgetAndDeleteUndoIt) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string global = Classify(client);
  EXPECT_EQ(Classify(client, "?user=alice"), global);
  EXPECT_EQ(client.Send(http::verb::get, "/users/alice/stats").result(), http::status::not_found);

  Train(client, "?label=ham&id=a1&user=alice", "review account details");
  Train(client, "?label=ham&id=a2&user=alice", "account review");
  const std::string alice = Classify(client, "?user=alice");
  EXPECT_NE(alice, global);
  EXPECT_LT(json::parse(alice).at("score").to_number<double>(),
            json::parse(global).at("score").to_number<double>());
  EXPECT_EQ(Classify(client, "?user=bob"), global);
  EXPECT_EQ(Classify(client), global);
  const json::value stats = client.GetJson("/users/alice/stats");
  EXPECT_EQ(stats.at("documents").as_int64(), 2);
  EXPECT_EQ(stats.at("classes").at(1).at("label").as_string(), "ham");
  EXPECT_EQ(stats.at("classes").at(1).at("documents").as_int64(), 2);
  EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 6);

  // The layer is stored: the same answers after a restart.
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  DaemonProcess restarted = Start();
  HttpClient again(restarted.port());
  EXPECT_EQ(Classify(again, "?user=alice"), alice);
  EXPECT_EQ(Classify(again), global);

  auto forgotten = again.Send(http::verb::post, "/forget?id=a2&user=alice", "");
  ASSERT_EQ(forgotten.result(), http::status::ok) << forgotten.body();
  forgotten = again.Send(http::verb::post, "/forget?user=alice", "review account details");
  EXPECT_EQ(forgotten.result(), http::status::not_found) << forgotten.body();  // Learned as a1.
  forgotten = again.Send(http::verb::post, "/forget?id=a1&user=alice", "");
  ASSERT_EQ(forgotten.result(), http::status::ok) << forgotten.body();
  EXPECT_EQ(Classify(again, "?user=alice"), global);

  Train(again, "?label=ham&user=alice", "review account details");
  EXPECT_NE(Classify(again, "?user=alice"), global);
  const auto deleted = again.Send(http::verb::delete_, "/users/alice");
  ASSERT_EQ(deleted.result(), http::status::ok) << deleted.body();
  EXPECT_EQ(again.Send(http::verb::get, "/users/alice/stats").result(), http::status::not_found);
  EXPECT_EQ(Classify(again, "?user=alice"), global);
}

TEST_F(UserLayersTest, GetUsersListsTheLayersWithTheirSizesPageByPage) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  EXPECT_TRUE(client.GetJson("/users").at("users").as_array().empty());
  for (const char* user : {"carol", "alice", "bob"}) {
    Train(client, std::string("?label=ham&id=m1&user=") + user, "review account details");
  }
  Train(client, "?label=spam&id=m2&user=alice", "cheap pills");
  const json::value all = client.GetJson("/users");
  const json::array& users = all.at("users").as_array();
  ASSERT_EQ(users.size(), 3u);
  EXPECT_EQ(users[0].at("user").as_string(), "alice");
  EXPECT_EQ(users[0], client.GetJson("/users/alice/stats"));
  EXPECT_EQ(users[0].at("documents").as_int64(), 2);
  EXPECT_EQ(users[2].at("user").as_string(), "carol");
  EXPECT_TRUE(all.at("next").is_null());
  const json::value first = client.GetJson("/users?limit=2");
  EXPECT_EQ(first.at("users").as_array().size(), 2u);
  EXPECT_EQ(first.at("next").as_string(), "bob");
  const json::value rest = client.GetJson("/users?after=bob&limit=2");
  ASSERT_EQ(rest.at("users").as_array().size(), 1u);
  EXPECT_EQ(rest.at("users").at(0).at("user").as_string(), "carol");
  EXPECT_EQ(client.Send(http::verb::get, "/users?limit=0").result(), http::status::bad_request);
  EXPECT_EQ(client.Send(http::verb::get, "/users?limit=1001").result(), http::status::bad_request);
  EXPECT_EQ(client.Send(http::verb::get, "/users?page=2").result(), http::status::bad_request);
  ASSERT_EQ(client.Send(http::verb::delete_, "/users/bob").result(), http::status::ok);
  EXPECT_EQ(client.GetJson("/users").at("users").as_array().size(), 2u);
}

TEST_F(UserLayersTest, BadUserIdsAre400AndDeleteNeedsATokenAsForgetDoes) {
  DaemonProcess daemon = Start({"--auth-tokens", "mx1:0123456789abcdef"});
  HttpClient client(daemon.port());
  const std::vector<std::pair<std::string, std::string>> auth = {
      {"Authorization", "Bearer 0123456789abcdef"}};
  EXPECT_EQ(
      client.Send(http::verb::post, "/classify?user=" + std::string(300, 'u'), kMessage).result(),
      http::status::bad_request);
  const auto bad =
      client.Send(http::verb::post, "/train?label=spam&user=", kMessage, "text/plain", auth);
  EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
  EXPECT_EQ(json::parse(bad.body()).at("error").at("code").as_string(), "invalid_argument");
  EXPECT_EQ(client.Send(http::verb::delete_, "/users/alice").result(), http::status::unauthorized);
  EXPECT_EQ(client.Send(http::verb::delete_, "/users/alice", "", "text/plain", auth).result(),
            http::status::ok);
}

TEST_F(UserLayersTest, TrainGlobalFromUsersOnAlsoTrainsTheGlobalModel) {
  DaemonProcess daemon = Start({"--train-global-from-users", "on"});
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string global = Classify(client);
  Train(client, "?label=ham&id=a1&user=alice", "review account details");
  EXPECT_NE(Classify(client), global);
  EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 7);
  EXPECT_EQ(client.GetJson("/users/alice/stats").at("documents").as_int64(), 1);
  const auto forgotten = client.Send(http::verb::post, "/forget?id=a1&user=alice", "");
  ASSERT_EQ(forgotten.result(), http::status::ok) << forgotten.body();
  EXPECT_EQ(Classify(client), global);
  EXPECT_EQ(Classify(client, "?user=alice"), global);
}

// /admin/learned and /admin/rollback with ?user= work on the user's own ledger: a rollback of
// mx1 in alice's layer forgets what mx1 trained there, keeps what mx2 trained, and a message mx2
// relearned meanwhile is mx2's now; bob's layer and the global model are untouched.
TEST_F(UserLayersTest, RollbackWithAUserUndoesOnlyWhatThatSourceTrainedInTheUsersLayer) {
  DaemonProcess daemon = Start({"--auth-tokens", "mx1:0123456789abcdef,mx2:fedcba9876543210abcd"});
  HttpClient client(daemon.port());
  const std::vector<std::pair<std::string, std::string>> mx1 = {
      {"Authorization", "Bearer 0123456789abcdef"}};
  const std::vector<std::pair<std::string, std::string>> mx2 = {
      {"Authorization", "Bearer fedcba9876543210abcd"}};
  const auto send = [&](http::verb verb, const std::string& target, const std::string& body,
                        const std::vector<std::pair<std::string, std::string>>& auth) {
    const auto response = client.Send(verb, target, body, "text/plain", auth);
    EXPECT_EQ(response.result(), http::status::ok) << target << ": " << response.body();
    return response.body();
  };
  const std::pair<const char*, const char*> seed[] = {{"spam", "send us your password"},
                                                      {"spam", "review us"},
                                                      {"ham", "password review"},
                                                      {"ham", "send us your review"}};
  int n = 0;
  for (const auto& [label, text] : seed) {
    send(http::verb::post, std::string("/train?label=") + label + "&id=seed-" + std::to_string(++n),
         text, mx1);
  }
  const std::string global_stats = send(http::verb::get, "/stats", "", mx1);
  const std::string global = Classify(client);

  send(http::verb::post, "/train?label=spam&id=a1&user=alice", "review account details", mx1);
  send(http::verb::post, "/train?label=spam&id=a2&user=alice", "account review", mx1);
  send(http::verb::post, "/train?label=ham&id=a3&user=alice", "password account", mx2);
  send(http::verb::post, "/train?label=ham&id=a2&user=alice", "account review", mx2);
  send(http::verb::post, "/train?label=spam&id=b1&user=bob", "review account details", mx1);
  const std::string bob = Classify(client, "?user=bob");

  const json::value listed =
      json::parse(send(http::verb::get, "/admin/learned?source=mx1&user=alice", "", mx1));
  EXPECT_EQ(listed.at("count").as_int64(), 1) << listed;  // a1; a2 is mx2's since its relearn.
  EXPECT_EQ(listed.at("messages").at(0).at("id").as_string(), "a1") << listed;

  const json::value rolled =
      json::parse(send(http::verb::post, "/admin/rollback?source=mx1&user=alice", "", mx1));
  EXPECT_EQ(rolled.at("forgotten").as_int64(), 1) << rolled;
  EXPECT_EQ(rolled.at("user").as_string(), "alice") << rolled;
  const json::value alice = client.GetJson("/users/alice/stats");
  EXPECT_EQ(alice.at("documents").as_int64(), 2) << alice;  // a2 and a3, both ham, of mx2.
  EXPECT_EQ(alice.at("classes").at(0).at("documents").as_int64(), 0) << alice;
  EXPECT_EQ(send(http::verb::get, "/stats", "", mx1), global_stats);
  EXPECT_EQ(Classify(client, "?user=bob"), bob);
  EXPECT_EQ(Classify(client), global);

  // Rolling back mx2 too leaves alice no layer: she scores as the global model again.
  send(http::verb::post, "/admin/rollback?source=mx2&user=alice", "", mx1);
  EXPECT_EQ(client.Send(http::verb::get, "/users/alice/stats").result(), http::status::not_found);
  EXPECT_EQ(Classify(client, "?user=alice"), global);
  const auto bad =
      client.Send(http::verb::post, "/admin/rollback?source=mx1&user=", "", "text/plain", mx1);
  EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
}

}  // namespace
}  // namespace nbspamd::testing
