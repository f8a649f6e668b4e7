// Concurrency through the real daemon: eight clients at once classify, train, relearn and forget
// messages drawn from one shared pool (so the same texts are learned at the same time under
// different ids). Each client owns its ids, so the order of its own acknowledged operations fixes
// what its ids end up as; the concurrent daemon must therefore hold exactly the model that a
// fresh daemon builds by replaying those operations one client after another. "Exactly" is
// checked byte for byte: /stats and the /classify answers of a fixed probe set, with
// explanations. The same must hold after the concurrent daemon restarts on its data folder.
#include <gtest/gtest.h>

#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <latch>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/message_pool.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::uint32_t kSeed = 20240611;
constexpr int kClients = 8;
constexpr int kOperationsPerClient = 400;
constexpr int kIdsPerClient = 24;
constexpr int kPoolSize = 240;
constexpr auto kClientTimeLimit = std::chrono::seconds(150);

const std::vector<std::string>& Pool() {
  static const std::vector<std::string> pool = MakeMessages(kSeed, kPoolSize);
  return pool;
}

// One acknowledged operation that changes (or, for a 404 forget, does not change) the model.
struct Operation {
  enum class Kind { kTrain, kForget } kind = Kind::kTrain;
  std::string id;
  std::string label;  // kTrain.
  int text = -1;      // kTrain: index into Pool().
  int http_status = 200;
  std::string status;  // The "status" field of a 200 answer.
};

HttpResponse Perform(HttpClient& client, const Operation& op) {
  if (op.kind == Operation::Kind::kTrain) {
    return client.Send(http::verb::post, "/train?label=" + op.label + "&id=" + QueryEncode(op.id),
                       Pool()[static_cast<std::size_t>(op.text)]);
  }
  return client.Send(http::verb::post, "/forget?id=" + QueryEncode(op.id));
}

// What a 200 answer says its status is ("" when the body has none).
std::string StatusField(const HttpResponse& response) {
  boost::system::error_code ec;
  const json::value body = json::parse(response.body(), ec);
  if (ec || !body.is_object()) return "";
  const json::value* status = body.as_object().if_contains("status");
  return status != nullptr && status->is_string() ? std::string(status->as_string()) : "";
}

// One client's run: its operations in order, and what it expects its ids to be at the end.
struct ClientRun {
  std::vector<Operation> acknowledged;
  std::map<std::string, std::string> learned;  // id → label, as the client's own history says.
  std::map<std::string, int> learned_text;     // id → the pool text it was learned with.
  int classified = 0;
  std::vector<std::string> failures;
};

void RunClient(unsigned short port, int client_index, std::latch& start, ClientRun& run) {
  std::mt19937 rng(kSeed + 1000u * static_cast<std::uint32_t>(client_index + 1));
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<int> any_id(0, kIdsPerClient - 1);
  std::uniform_int_distribution<int> any_text(0, kPoolSize - 1);
  HttpClient client(port);
  start.arrive_and_wait();
  const auto deadline = std::chrono::steady_clock::now() + kClientTimeLimit;
  const auto fail = [&](const std::string& what) {
    run.failures.push_back("client " + std::to_string(client_index) + ": " + what);
  };
  for (int i = 0; i < kOperationsPerClient && run.failures.size() < 5; ++i) {
    if (std::chrono::steady_clock::now() > deadline) {
      fail("out of time after " + std::to_string(i) + " operations");
      break;
    }
    const int roll = percent(rng);
    if (roll < 20) {
      const int text = any_text(rng);
      const auto response = client.Send(http::verb::post, "/classify?explain=3",
                                        Pool()[static_cast<std::size_t>(text)]);
      // 409 only while nothing has been learned yet, by anyone.
      if (response.result() == http::status::ok) {
        ++run.classified;
      } else if (response.result() != http::status::conflict) {
        fail("classify answered " + std::to_string(response.result_int()) + ": " + response.body());
      }
      continue;
    }
    Operation op;
    const std::string random_id = IdOf(client_index, any_id(rng));
    if (roll < 65 || (roll < 80 && run.learned.empty())) {  // Train.
      op.kind = Operation::Kind::kTrain;
      op.id = random_id;
      op.label = percent(rng) < 50 ? "spam" : "ham";
      op.text = any_text(rng);
    } else if (roll < 80) {  // Relearn a learned id as the other label.
      auto it = run.learned.begin();
      std::advance(it, std::uniform_int_distribution<std::size_t>(0, run.learned.size() - 1)(rng));
      op.kind = Operation::Kind::kTrain;
      op.id = it->first;
      op.label = it->second == "spam" ? "ham" : "spam";
      op.text = percent(rng) < 75 ? run.learned_text[op.id] : any_text(rng);
    } else {  // Forget: mostly a learned id, sometimes one that may be unknown.
      op.kind = Operation::Kind::kForget;
      op.id = random_id;
      if (!run.learned.empty() && percent(rng) < 70) {
        auto it = run.learned.begin();
        std::advance(it,
                     std::uniform_int_distribution<std::size_t>(0, run.learned.size() - 1)(rng));
        op.id = it->first;
      }
    }
    // What this client's own history says the daemon must answer.
    const auto known = run.learned.find(op.id);
    int expected_http = 200;
    std::string expected_status;
    if (op.kind == Operation::Kind::kTrain) {
      expected_status = known == run.learned.end()  ? "learned"
                        : known->second == op.label ? "unchanged"
                                                    : "relearned";
    } else {
      expected_http = known == run.learned.end() ? 404 : 200;
      expected_status = known == run.learned.end() ? "" : "forgotten";
    }
    const HttpResponse response = Perform(client, op);
    op.http_status = response.result_int();
    op.status = op.http_status == 200 ? StatusField(response) : "";
    if (op.http_status != expected_http || op.status != expected_status) {
      fail("operation " + std::to_string(i) + " on " + op.id + ": expected " +
           std::to_string(expected_http) + " " + expected_status + ", got " +
           std::to_string(op.http_status) + " " + response.body());
      continue;  // Not acknowledged as expected: the replay could not mirror it.
    }
    if (op.kind == Operation::Kind::kTrain) {
      if (op.status == "learned") run.learned_text[op.id] = op.text;
      run.learned[op.id] = op.label;
    } else if (op.http_status == 200) {
      run.learned.erase(op.id);
      run.learned_text.erase(op.id);
    }
    // A 404 forget of an unknown id changes nothing; it is kept so the replay can agree.
    run.acknowledged.push_back(std::move(op));
  }
}

// The fixed probe set: pool messages (learned, relearned or forgotten) and unseen ones.
std::vector<std::string> Probes() {
  std::vector<std::string> probes;
  for (int i = 0; i < kPoolSize; i += 15) probes.push_back(Pool()[static_cast<std::size_t>(i)]);
  for (const std::string& unseen : MakeMessages(kSeed + 7, 6)) probes.push_back(unseen);
  probes.push_back("café lunch meeting prize ÜBER");
  return probes;
}

struct ModelView {
  std::string stats;
  std::vector<std::string> answers;  // /classify?explain=10 of each probe, in order.
};

ModelView Observe(unsigned short port) {
  HttpClient client(port);
  ModelView view;
  const auto stats = client.Send(http::verb::get, "/stats");
  EXPECT_EQ(stats.result(), http::status::ok) << stats.body();
  view.stats = stats.body();
  for (const std::string& probe : Probes()) {
    const auto answer = client.Send(http::verb::post, "/classify?explain=10", probe);
    EXPECT_EQ(answer.result(), http::status::ok) << answer.body();
    view.answers.push_back(answer.body());
  }
  return view;
}

void ExpectSameModel(const ModelView& expected, const ModelView& actual, const std::string& what) {
  EXPECT_EQ(actual.stats, expected.stats) << what << ": /stats differs";
  ASSERT_EQ(actual.answers.size(), expected.answers.size());
  for (std::size_t i = 0; i < expected.answers.size(); ++i) {
    EXPECT_EQ(actual.answers[i], expected.answers[i]) << what << ": probe " << i << " differs";
  }
}

DaemonProcess StartDaemon(const TempDir& dir) {
  auto daemon = DaemonProcess::Start(
      {"--listen", "127.0.0.1:0", "--data-dir", dir.Join("model"), "--threads", "2"});
  if (!daemon) throw std::runtime_error(daemon.error());
  return std::move(*daemon);
}

TEST(ConcurrencyTest, ConcurrentClientsLeaveTheModelASerialReplayOfTheirAcknowledgedOperations) {
  TempDir concurrent_dir;
  DaemonProcess concurrent = StartDaemon(concurrent_dir);

  std::vector<ClientRun> runs(kClients);
  {
    std::latch start(kClients);
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&, c] {
        try {
          RunClient(concurrent.port(), c, start, runs[static_cast<std::size_t>(c)]);
        } catch (const std::exception& e) {
          runs[static_cast<std::size_t>(c)].failures.push_back("client " + std::to_string(c) +
                                                               " threw: " + e.what());
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  std::size_t acknowledged = 0;
  std::map<std::string, std::int64_t> documents_per_label;
  for (const ClientRun& run : runs) {
    for (const std::string& failure : run.failures) ADD_FAILURE() << failure;
    acknowledged += run.acknowledged.size();
    for (const auto& [id, label] : run.learned) ++documents_per_label[label];
  }
  ASSERT_FALSE(HasFailure()) << concurrent.Log();
  EXPECT_GT(acknowledged, static_cast<std::size_t>(kClients * kOperationsPerClient / 2));

  const ModelView after_concurrency = Observe(concurrent.port());
  // The documents per class are what the clients' own histories say.
  const json::value stats = json::parse(after_concurrency.stats);
  for (const json::value& c : stats.at("classes").as_array()) {
    const std::string label(c.at("label").as_string());
    EXPECT_EQ(c.at("documents").as_int64(), documents_per_label[label]) << label;
  }

  // A fresh daemon, fed the acknowledged operations one client after another.
  TempDir replay_dir;
  {
    DaemonProcess replay = StartDaemon(replay_dir);
    HttpClient client(replay.port());
    for (std::size_t c = 0; c < runs.size(); ++c) {
      for (const Operation& op : runs[c].acknowledged) {
        const HttpResponse response = Perform(client, op);
        ASSERT_EQ(response.result_int(), op.http_status)
            << "replay of client " << c << " on " << op.id << ": " << response.body();
        ASSERT_EQ(op.http_status == 200 ? StatusField(response) : "", op.status)
            << "replay of client " << c << " on " << op.id << ": " << response.body();
      }
    }
    ExpectSameModel(after_concurrency, Observe(replay.port()), "serial replay");
    EXPECT_EQ(replay.Terminate(), 0) << replay.Log();
  }

  // The concurrent daemon, restarted on its data folder.
  EXPECT_EQ(concurrent.Terminate(), 0) << concurrent.Log();
  DaemonProcess restarted = StartDaemon(concurrent_dir);
  ExpectSameModel(after_concurrency, Observe(restarted.port()), "restart");
  EXPECT_EQ(restarted.Terminate(), 0) << restarted.Log();
  std::printf("[          ] %zu acknowledged operations, %zu documents at the end\n", acknowledged,
              static_cast<std::size_t>(stats.at("documents").as_int64()));
}

}  // namespace
}  // namespace nbspamd::testing
