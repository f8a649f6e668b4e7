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
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <latch>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/message_pool.h"
#include "tests/support/temp_dir.h"
#include "tests/support/training_history.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;

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

void RunClient(unsigned short port, int client_index, std::latch& start, ClientRun& run) {
  std::mt19937 rng(kSeed + 1000u * static_cast<std::uint32_t>(client_index + 1));
  std::uniform_int_distribution<int> percent(0, 99);
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
    Operation op = PickOperation(rng, roll, OperationMix{.train = 65, .relearn = 80}, client_index,
                                 kIdsPerClient, kPoolSize, run);
    const ExpectedAnswer expected = Expect(run, op);
    const HttpResponse response = Perform(client, Pool(), op);
    op.http_status = response.result_int();
    op.status = op.http_status == 200 ? StatusField(response) : "";
    if (op.http_status != expected.http_status || op.status != expected.status) {
      fail("operation " + std::to_string(i) + " on " + op.id + ": expected " +
           std::to_string(expected.http_status) + " " + expected.status + ", got " +
           std::to_string(op.http_status) + " " + response.body());
      continue;  // Not acknowledged as expected: the replay could not mirror it.
    }
    Acknowledge(run, std::move(op));
  }
}

TEST(ConcurrencyTest, ConcurrentClientsLeaveTheModelASerialReplayOfTheirAcknowledgedOperations) {
  TempDir concurrent_dir;
  DaemonProcess concurrent = StartTestDaemon(concurrent_dir.Join("model"));

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
  std::map<std::string, std::int64_t> documents;
  const std::size_t acknowledged = CollectRuns(runs, documents);
  ASSERT_FALSE(HasFailure()) << concurrent.Log();
  EXPECT_GT(acknowledged, static_cast<std::size_t>(kClients * kOperationsPerClient / 2));

  const std::vector<std::string> probes = Probes(Pool(), kSeed + 7);
  const ModelView after_concurrency = Observe(concurrent.port(), probes);
  // The documents per class are what the clients' own histories say.
  ExpectDocuments(after_concurrency, documents);

  // A fresh daemon, fed the acknowledged operations one client after another (in another order,
  // so with other held-out scores: spam_confidence aside).
  ExpectSameModel(WithoutCalibration(after_concurrency),
                  WithoutCalibration(SerialReplay(Pool(), runs, probes, /*check_answers=*/true)),
                  "serial replay");

  // The concurrent daemon, restarted on its data folder: spam_confidence included.
  EXPECT_EQ(concurrent.Terminate(), 0) << concurrent.Log();
  DaemonProcess restarted = StartTestDaemon(concurrent_dir.Join("model"));
  ExpectSameModel(after_concurrency, Observe(restarted.port(), probes), "restart");
  EXPECT_EQ(restarted.Terminate(), 0) << restarted.Log();
  std::int64_t learned = 0;
  for (const auto& [label, count] : documents) learned += count;
  std::printf("[          ] %zu acknowledged operations, %lld documents at the end\n", acknowledged,
              static_cast<long long>(learned));
}

}  // namespace
}  // namespace nbspamd::testing
