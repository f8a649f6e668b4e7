// Cluster mode through real processes: a real redis-server and several real nbspamd daemons on
// 127.0.0.1 share one model through the training stream. Clients send trains, relearns and
// forgets to random daemons at once; after quiescence every daemon must hold exactly the same
// model (/stats and the /classify answers of a probe set, with explanations, byte for byte), and
// exactly the model a standalone daemon builds from the acknowledged operations replayed one
// client after another. The same must hold when a daemon is killed with SIGKILL mid-stream and
// restarted, when Redis restarts, and for a daemon that joins from another's checkpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "replication/redis_client.h"
#include "replication/stream_codec.h"
#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/message_pool.h"
#include "tests/support/redis_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/training_history.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::uint32_t kSeed = 20261123;
constexpr int kIdsPerClient = 24;
constexpr int kPoolSize = 240;
constexpr auto kClientTimeLimit = std::chrono::seconds(150);
constexpr auto kConvergenceLimit = std::chrono::seconds(60);

const std::vector<std::string>& Pool() {
  static const std::vector<std::string> pool = MakeMessages(kSeed, kPoolSize);
  return pool;
}

// The daemons' ports, which the test changes while clients run (a restart keeps the port; a
// joining daemon adds one).
class Ports {
 public:
  void Set(std::size_t index, unsigned short port) {
    std::lock_guard lock(mutex_);
    if (ports_.size() <= index) ports_.resize(index + 1, 0);
    ports_[index] = port;
  }
  std::vector<unsigned short> All() const {
    std::lock_guard lock(mutex_);
    return ports_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<unsigned short> ports_;
};

// One client: `operations` trains, relearns and forgets of its own ids, each sent to a random
// daemon. With `tolerate_outages`, an operation that gets no answer or a 503 is sent again (to
// another random daemon) until one acknowledges it; its status is then not checked, since the
// first attempt may have reached the stream.
// With `more`, it goes on past `operations` (up to ten times as many) while *more is true.
// With `acknowledged`, it counts there each operation a daemon acknowledged.
void RunClient(const Ports& ports, int client_index, int operations, bool tolerate_outages,
               const std::atomic<bool>* more, std::atomic<std::int64_t>* acknowledged,
               std::latch& start, ClientRun& run) {
  std::mt19937 rng(kSeed + 1000u * static_cast<std::uint32_t>(client_index + 1));
  std::uniform_int_distribution<int> percent(0, 99);
  std::map<unsigned short, std::unique_ptr<HttpClient>> clients;
  start.arrive_and_wait();
  const auto deadline = std::chrono::steady_clock::now() + kClientTimeLimit;
  const auto fail = [&](const std::string& what) {
    run.failures.push_back("client " + std::to_string(client_index) + ": " + what);
  };
  const auto go_on = [&](int i) {
    return i < operations || (more != nullptr && more->load() && i < 10 * operations);
  };
  for (int i = 0; go_on(i) && run.failures.size() < 5; ++i) {
    if (std::chrono::steady_clock::now() > deadline) {
      fail("out of time after " + std::to_string(i) + " operations");
      break;
    }
    Operation op = PickOperation(rng, percent(rng), OperationMix{.train = 55, .relearn = 75},
                                 client_index, kIdsPerClient, kPoolSize, run);
    const ExpectedAnswer expected = Expect(run, op);
    std::optional<HttpResponse> response;
    for (int attempt = 0; attempt < 300 && !response; ++attempt) {
      if (std::chrono::steady_clock::now() > deadline) break;
      const std::vector<unsigned short> all = ports.All();
      const unsigned short port =
          all[std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(rng)];
      try {
        auto& client = clients[port];
        if (!client) client = std::make_unique<HttpClient>(port);
        HttpResponse answer = Perform(*client, Pool(), op);
        if (tolerate_outages && answer.result() == http::status::service_unavailable) {
          op.retried = true;
        } else {
          response = std::move(answer);
          break;
        }
      } catch (const std::exception& e) {
        if (!tolerate_outages) {
          fail(std::string("no answer: ") + e.what());
          break;
        }
        clients.erase(port);
        op.retried = true;
      }
      ++run.retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!response) {
      fail("operation " + std::to_string(i) + " on " + op.id + " was never acknowledged");
      break;
    }
    op.http_status = response->result_int();
    op.status = op.http_status == 200 ? StatusField(*response) : "";
    if (op.retried) {
      // The first attempt may have been applied: any answer consistent with that is right.
      const bool ok = op.kind == Operation::Kind::kTrain
                          ? op.http_status == 200
                          : op.http_status == 200 || op.http_status == 404;
      if (!ok) {
        fail("retried operation " + std::to_string(i) + " on " + op.id + ": " + response->body());
        continue;
      }
    } else if (op.http_status != expected.http_status || op.status != expected.status) {
      fail("operation " + std::to_string(i) + " on " + op.id + ": expected " +
           std::to_string(expected.http_status) + " " + expected.status + ", got " +
           std::to_string(op.http_status) + " " + response->body());
      continue;
    }
    Acknowledge(run, std::move(op));
    if (acknowledged != nullptr) acknowledged->fetch_add(1);
  }
}

const std::vector<std::string>& TestProbes() {
  static const std::vector<std::string> probes = Probes(Pool(), kSeed + 7);
  return probes;
}

// What a daemon's /metrics says it has applied ("" when it cannot tell).
std::string AppliedPosition(unsigned short port) {
  try {
    HttpClient client(port);
    const std::string text = client.Send(http::verb::get, "/metrics").body();
    const std::string marker = "nbspamd_cluster_applied_position_info{applied=\"";
    const std::size_t at = text.find(marker);
    if (at == std::string::npos) return "";
    const std::size_t begin = at + marker.size();
    return text.substr(begin, text.find('"', begin) - begin);
  } catch (const std::exception&) {
    return "";
  }
}

// The stream's last entry id, straight from Redis.
std::string LastStreamId(unsigned short redis_port) {
  replication::RedisClient redis("127.0.0.1", redis_port);
  auto reply = redis.Command({"XREVRANGE", "nbspamd:training", "+", "-", "COUNT", "1"});
  if (!reply || reply->elements.empty()) return "";
  return reply->elements[0].elements[0].text;
}

// Waits until every daemon has applied the stream's last entry; false after kConvergenceLimit.
bool WaitForConvergence(unsigned short redis_port, const std::vector<unsigned short>& ports,
                        double* seconds) {
  const auto begin = std::chrono::steady_clock::now();
  const std::string last = LastStreamId(redis_port);
  while (std::chrono::steady_clock::now() - begin < kConvergenceLimit) {
    bool all = true;
    for (unsigned short port : ports) all = all && AppliedPosition(port) == last;
    if (all) {
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A sample of a daemon's /metrics without labels (nullopt when it cannot tell).
std::optional<double> MetricValue(unsigned short port, const std::string& name) {
  try {
    HttpClient client(port);
    const std::string text = client.Send(http::verb::get, "/metrics").body();
    const std::string marker = "\n" + name + " ";
    const std::size_t at = text.find(marker);
    if (at == std::string::npos) return std::nullopt;
    const std::size_t begin = at + marker.size();
    return std::stod(text.substr(begin, text.find('\n', begin) - begin));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Whether a daemon's model has applied the stream through `position` (a stream entry id).
bool AppliedThrough(unsigned short port, const std::string& position) {
  const auto applied = replication::StreamId::Parse(AppliedPosition(port));
  const auto wanted = replication::StreamId::Parse(position);
  return applied && wanted && *applied >= *wanted;
}

// Polls `done` every 20 ms until it holds; throws, naming `what`, when it does not within
// kEventLimit. For the scenario's steps, which wait for what they need to have happened.
constexpr auto kEventLimit = std::chrono::seconds(60);
template <typename Done>
void WaitFor(const std::string& what, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kEventLimit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("timed out waiting until " + what);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Answers come once the daemon applied the change (cluster_wait_applied), with the real status
// that the test checks against the client's history.
std::vector<std::string> ClusterArgs(const std::string& data_dir, unsigned short port,
                                     unsigned short redis_port, const std::string& name,
                                     const std::string& backup_dir) {
  return {"--listen",
          "127.0.0.1:" + std::to_string(port),
          "--data-dir",
          data_dir,
          "--threads",
          "2",
          "--backup-dir",
          backup_dir,
          "--cluster-redis",
          "127.0.0.1:" + std::to_string(redis_port),
          "--cluster-name",
          name,
          "--cluster-wait-applied",
          "true"};
}

DaemonProcess Start(const std::vector<std::string>& args) {
  auto daemon = DaemonProcess::Start(args);
  if (!daemon) throw std::runtime_error(daemon.error());
  return std::move(*daemon);
}

// Runs `clients` clients of `operations` each against `ports` and returns their runs.
std::vector<ClientRun> RunClients(const Ports& ports, int clients, int operations,
                                  bool tolerate_outages, const std::atomic<bool>* more = nullptr,
                                  std::atomic<std::int64_t>* acknowledged = nullptr) {
  std::vector<ClientRun> runs(static_cast<std::size_t>(clients));
  std::latch start(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      ClientRun& run = runs[static_cast<std::size_t>(c)];
      try {
        RunClient(ports, c, operations, tolerate_outages, more, acknowledged, start, run);
      } catch (const std::exception& e) {
        run.failures.push_back("client " + std::to_string(c) + " threw: " + e.what());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return runs;
}

TEST(ClusterTest, ThreeDaemonsConvergeToTheModelOfASerialReplay) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  std::vector<DaemonProcess> daemons;
  Ports ports;
  for (int d = 0; d < 3; ++d) {
    daemons.push_back(Start(ClusterArgs(dir.Join("d" + std::to_string(d)), 0, redis->port(),
                                        "d" + std::to_string(d), dir.Join("backups"))));
    ports.Set(static_cast<std::size_t>(d), daemons.back().port());
  }
  const auto begin = std::chrono::steady_clock::now();
  const std::vector<ClientRun> runs = RunClients(ports, 6, 500, /*tolerate_outages=*/false);
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::map<std::string, std::int64_t> documents;
  const std::size_t acknowledged = CollectRuns(runs, documents);
  ASSERT_FALSE(HasFailure()) << daemons[0].Log();
  EXPECT_EQ(acknowledged, 3000u);

  double converge_seconds = 0;
  ASSERT_TRUE(WaitForConvergence(redis->port(), ports.All(), &converge_seconds));
  const ModelView first = Observe(daemons[0].port(), TestProbes());
  ExpectDocuments(first, documents);
  for (std::size_t d = 1; d < daemons.size(); ++d) {
    ExpectSameModel(first, Observe(daemons[d].port(), TestProbes()), "daemon " + std::to_string(d));
  }
  // The daemons agree on spam_confidence too; a replay in another order has other held-out
  // scores.
  ExpectSameModel(
      WithoutCalibration(first),
      WithoutCalibration(SerialReplay(Pool(), runs, TestProbes(), /*check_answers=*/true)),
      "serial replay");
  for (DaemonProcess& daemon : daemons) EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  std::printf(
      "[          ] %zu acknowledged operations in %.1f s (%.0f/s) over 3 daemons; "
      "converged %.2f s after the last answer\n",
      acknowledged, load_seconds, static_cast<double>(acknowledged) / load_seconds,
      converge_seconds);
}

TEST(ClusterTest, KillNineRedisRestartAndACheckpointJoinLoseAndDoubleNothing) {
  TempDir dir;
  const unsigned short redis_port = FreeLoopbackPort();
  auto redis = RedisProcess::Start(dir.path().string(), redis_port);
  ASSERT_TRUE(redis.has_value()) << redis.error();
  std::vector<std::optional<DaemonProcess>> daemons(4);
  std::vector<std::vector<std::string>> args(4);
  Ports ports;
  for (std::size_t d = 0; d < 3; ++d) {
    args[d] = ClusterArgs(dir.Join("d" + std::to_string(d)), FreeLoopbackPort(), redis_port,
                          "d" + std::to_string(d), dir.Join("backups"));
    daemons[d].emplace(Start(args[d]));
    ports.Set(d, daemons[d]->port());
  }

  // The clients go on until the scenario is over, and each step waits until they have had
  // kStep more operations acknowledged, so each event happens mid-stream.
  constexpr std::int64_t kStep = 40;
  std::vector<ClientRun> runs;
  std::atomic<bool> more = true;
  std::atomic<std::int64_t> acknowledged_so_far = 0;
  std::thread load([&] {
    runs = RunClients(ports, 4, 500, /*tolerate_outages=*/true, &more, &acknowledged_so_far);
  });
  const auto progress = [&](const std::string& while_what) {
    const std::int64_t target = acknowledged_so_far.load() + kStep;
    WaitFor(std::to_string(kStep) + " more operations were acknowledged " + while_what,
            [&] { return acknowledged_so_far.load() >= target; });
  };
  const auto all_daemons = [&](const std::string& what, auto holds) {
    WaitFor("every daemon " + what, [&] {
      for (const auto& daemon : daemons) {
        if (daemon && !holds(daemon->port())) return false;
      }
      return true;
    });
  };
  const auto connected = [](unsigned short port) {
    return MetricValue(port, "nbspamd_cluster_connected") == 1.0;
  };
  std::string scenario_error;
  std::string checkpoint;
  try {
    progress("before the kill");
    daemons[1]->Kill();  // SIGKILL mid-stream.
    progress("while daemon 1 was dead");
    daemons[1].reset();
    const std::string before_restart = LastStreamId(redis_port);
    daemons[1].emplace(Start(args[1]));
    // It resumes where its model ended and catches up with what it missed, under load.
    WaitFor("daemon 1 applied " + before_restart,
            [&] { return AppliedThrough(daemons[1]->port(), before_restart); });
    progress("after daemon 1 restarted");

    redis->Stop();
    all_daemons("saw Redis go", [&](unsigned short port) { return !connected(port); });
    redis = RedisProcess::Start(dir.path().string(), redis_port);
    if (!redis) throw std::runtime_error("Redis restart: " + redis.error());
    all_daemons("reads the stream again", connected);
    progress("after Redis restarted");

    HttpClient admin(daemons[0]->port());
    const auto backup = admin.Send(http::verb::post, "/admin/backup");
    if (backup.result() != http::status::ok) throw std::runtime_error(backup.body());
    checkpoint = std::string(json::parse(backup.body()).at("path").as_string());
    args[3] = ClusterArgs(checkpoint, FreeLoopbackPort(), redis_port, "d3", dir.Join("backups"));
    const std::string before_join = LastStreamId(redis_port);
    daemons[3].emplace(Start(args[3]));
    ports.Set(3, daemons[3]->port());
    // It catches up from the checkpoint, and takes its share of the load.
    WaitFor("daemon 3 applied " + before_join,
            [&] { return AppliedThrough(daemons[3]->port(), before_join); });
    progress("after daemon 3 joined");
  } catch (const std::exception& e) {
    scenario_error = e.what();
  }
  more = false;
  load.join();
  std::string client_failures;
  for (const ClientRun& run : runs) {
    for (const std::string& failure : run.failures) client_failures += failure + "\n";
  }
  std::string logs;
  for (const auto& daemon : daemons) {
    if (daemon) logs += daemon->Log();
  }
  ASSERT_EQ(scenario_error, "") << client_failures << logs;
  std::map<std::string, std::int64_t> documents;
  const std::size_t acknowledged = CollectRuns(runs, documents);
  ASSERT_FALSE(HasFailure()) << daemons[0]->Log();
  int retries = 0;
  for (const ClientRun& run : runs) retries += run.retries;

  double converge_seconds = 0;
  ASSERT_TRUE(WaitForConvergence(redis_port, ports.All(), &converge_seconds)) << daemons[3]->Log();
  const ModelView first = Observe(daemons[0]->port(), TestProbes());
  ExpectDocuments(first, documents);  // Nothing lost, nothing doubled.
  for (std::size_t d = 1; d < daemons.size(); ++d) {
    ExpectSameModel(first, Observe(daemons[d]->port(), TestProbes()),
                    "daemon " + std::to_string(d));
  }
  // The daemons agree on spam_confidence too; a replay in another order has other held-out
  // scores.
  ExpectSameModel(
      WithoutCalibration(first),
      WithoutCalibration(SerialReplay(Pool(), runs, TestProbes(), /*check_answers=*/true)),
      "serial replay");

  // Restarted on its data folder, a daemon resumes where its model ends and stays identical.
  EXPECT_EQ(daemons[2]->Terminate(), 0) << daemons[2]->Log();
  daemons[2].reset();
  daemons[2].emplace(Start(args[2]));
  ExpectSameModel(first, Observe(daemons[2]->port(), TestProbes()), "daemon 2 restarted");
  for (auto& daemon : daemons) EXPECT_EQ(daemon->Terminate(), 0) << daemon->Log();
  std::printf(
      "[          ] %zu acknowledged operations, %d retried attempts across a kill -9, a "
      "Redis restart and a checkpoint join; converged %.2f s after the last answer\n",
      acknowledged, retries, converge_seconds);
}

TEST(ClusterTest, ByDefaultATrainIsAnsweredQueuedOnceRedisHasIt) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  DaemonProcess daemon =
      Start({"--listen", "127.0.0.1:0", "--data-dir", dir.Join("model"), "--cluster-redis",
             "127.0.0.1:" + std::to_string(redis->port()), "--cluster-name", "only"});
  HttpClient client(daemon.port());
  const auto train = client.Send(http::verb::post, "/train?label=spam&id=q1", "cheap pills now");
  ASSERT_EQ(train.result(), http::status::ok) << train.body();
  EXPECT_EQ(StatusField(train), "queued") << train.body();
  const std::string stream_id(json::parse(train.body()).at("stream_id").as_string());
  EXPECT_EQ(stream_id, LastStreamId(redis->port()));  // In Redis when answered.
  // A forget of an id nobody learned is queued too: only applying it finds nothing to forget.
  const auto forget = client.Send(http::verb::post, "/forget?id=never-learned");
  EXPECT_EQ(forget.result(), http::status::ok) << forget.body();
  EXPECT_EQ(StatusField(forget), "queued") << forget.body();
  double seconds = 0;
  ASSERT_TRUE(WaitForConvergence(redis->port(), {daemon.port()}, &seconds));
  const json::value stats = json::parse(client.Send(http::verb::get, "/stats").body());
  EXPECT_EQ(stats.at("documents").as_int64(), 1) << stats;
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

// count=all (an archive import) rides the stream with its event: every daemon counts such a
// message whatever its training regime, while the same message without it is only checked.
TEST(ClusterTest, ACountAllTrainIsCountedByEveryDaemon) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  std::vector<DaemonProcess> daemons;
  for (const char* name : {"one", "two"}) {
    daemons.push_back(
        Start({"--listen", "127.0.0.1:0", "--data-dir", dir.Join(std::string("model-") + name),
               "--cluster-redis", "127.0.0.1:" + std::to_string(redis->port()), "--cluster-name",
               name, "--cluster-wait-applied", "true", "--train-margin", "0"}));
  }
  HttpClient client(daemons[0].port());
  const auto status = [&](const std::string& target, const std::string& body) {
    const auto reply = client.Send(http::verb::post, target, body);
    EXPECT_EQ(reply.result(), http::status::ok) << reply.body();
    return StatusField(reply);
  };
  const std::string spam = "cheap pills now cheap pills";
  EXPECT_EQ(status("/train?label=spam&id=s1", spam), "learned");
  EXPECT_EQ(status("/train?label=ham&id=h1", "meeting agenda for tomorrow"), "learned");
  // Scored right (beyond margin 0): only checked, unless it comes with count=all.
  EXPECT_EQ(status("/train?label=spam&id=s2", spam), "checked");
  EXPECT_EQ(status("/train?label=spam&id=s3&count=all", spam), "learned");
  const auto other = client.Send(http::verb::post, "/train?label=spam&id=s4&count=every", spam);
  EXPECT_EQ(other.result(), http::status::bad_request) << other.body();

  const auto documents_everywhere = [&](std::int64_t expected, const std::string& what) {
    double seconds = 0;
    ASSERT_TRUE(
        WaitForConvergence(redis->port(), {daemons[0].port(), daemons[1].port()}, &seconds));
    for (DaemonProcess& daemon : daemons) {
      HttpClient each(daemon.port());
      const json::value stats = json::parse(each.Send(http::verb::get, "/stats").body());
      EXPECT_EQ(stats.at("documents").as_int64(), expected) << what << ": " << stats;
    }
  };
  documents_everywhere(3, "s1, h1 and s3 counted");

  // The mark is a field of its own on s3's entry, and on no other.
  replication::RedisClient redis_client("127.0.0.1", redis->port());
  const auto range = redis_client.Command({"XRANGE", "nbspamd:training", "-", "+"});
  ASSERT_TRUE(range.has_value());
  ASSERT_EQ(range->elements.size(), 4u);
  std::vector<std::vector<std::string>> fields(4);
  for (std::size_t i = 0; i < 4; ++i) {
    for (const auto& field : range->elements[i].elements[1].elements) {
      fields[i].push_back(field.text);
    }
  }
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(std::find(fields[i].begin(), fields[i].end(), "c"), fields[i].end()) << i;
  }
  const auto mark = std::find(fields[3].begin(), fields[3].end(), "c");
  ASSERT_NE(mark, fields[3].end());
  ASSERT_NE(mark + 1, fields[3].end());
  EXPECT_EQ(*(mark + 1), "all");

  // s2's entry again with another mark: damaged, skipped alike by every daemon; with "all":
  // the checked s2 is counted now, on every daemon.
  const auto append = [&](const std::string& value) {
    std::vector<std::string> command = {"XADD", "nbspamd:training", "*"};
    command.insert(command.end(), fields[2].begin(), fields[2].end());
    command.insert(command.end(), {"c", value});
    ASSERT_TRUE(redis_client.Command(command).has_value());
  };
  append("every");
  documents_everywhere(3, "a damaged mark is skipped");
  for (DaemonProcess& daemon : daemons) {
    EXPECT_THAT(daemon.Log(), ::testing::HasSubstr("corrupt stream event: a count field"))
        << daemon.Log();
  }
  append("all");
  documents_everywhere(4, "s2 counted by its entry marked all");
  for (DaemonProcess& daemon : daemons) EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

// A scan id names a scan of the daemon that classified: another daemon has no such scan (404,
// saying so), while a train by scan id on the daemon that has it goes through the stream like
// any train and reaches every daemon.
TEST(ClusterTest, AScanIdIsTheClassifyingDaemonsAndItsTrainReachesEveryDaemon) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  DaemonProcess a = Start(ClusterArgs(dir.Join("a"), 0, redis->port(), "a", dir.Join("backups-a")));
  DaemonProcess b = Start(ClusterArgs(dir.Join("b"), 0, redis->port(), "b", dir.Join("backups-b")));
  HttpClient on_a(a.port());
  HttpClient on_b(b.port());
  for (const auto& [target, text] : {std::pair{"/train?label=spam&id=g1", "cheap pills now"},
                                     {"/train?label=ham&id=g2", "lunch at noon with the team"}}) {
    ASSERT_EQ(on_a.Send(http::verb::post, target, text).result(), http::status::ok);
  }
  double seconds = 0;
  ASSERT_TRUE(WaitForConvergence(redis->port(), {a.port(), b.port()}, &seconds));
  const auto classified = on_a.Send(http::verb::post, "/classify", "cheap lunch pills now");
  ASSERT_EQ(classified.result(), http::status::ok) << classified.body();
  const std::string scan_id(json::parse(classified.body()).at("scan_id").as_string());

  const auto elsewhere = on_b.Send(http::verb::post, "/train?label=ham&scan_id=" + scan_id);
  EXPECT_EQ(elsewhere.result(), http::status::not_found) << elsewhere.body();
  EXPECT_NE(elsewhere.body().find("no scan " + scan_id), std::string::npos) << elsewhere.body();

  const auto trained = on_a.Send(http::verb::post, "/train?label=ham&scan_id=" + scan_id);
  ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
  ASSERT_TRUE(WaitForConvergence(redis->port(), {a.port(), b.port()}, &seconds));
  EXPECT_EQ(on_a.Send(http::verb::get, "/stats").body(),
            on_b.Send(http::verb::get, "/stats").body());
  EXPECT_EQ(json::parse(on_b.Send(http::verb::get, "/stats").body()).at("documents").as_int64(), 3);

  // One key signs the scan headers of the whole cluster: a's header holds on b, which learns
  // the copy as itself only because it has no such scan; another daemon's header does not.
  const std::string signature(json::parse(classified.body()).at("scan_signature").as_string());
  const std::string copy =
      "X-Spam-Scan-Id: " + scan_id + "; sig=" + signature + "\r\n\r\ncheap lunch pills now";
  const auto reported = on_b.Send(http::verb::post, "/train?label=spam", copy);
  ASSERT_EQ(reported.result(), http::status::ok) << reported.body();
  EXPECT_EQ(json::parse(reported.body()).at("scan_header").as_string(), "unknown")
      << reported.body();
  std::filesystem::create_directories(dir.Join("other-redis"));
  auto other_redis = RedisProcess::Start(dir.Join("other-redis"), FreeLoopbackPort());
  ASSERT_TRUE(other_redis.has_value()) << other_redis.error();
  DaemonProcess c =
      Start(ClusterArgs(dir.Join("c"), 0, other_redis->port(), "c", dir.Join("backups-c")));
  HttpClient on_c(c.port());
  const auto foreign = on_c.Send(http::verb::post, "/train?label=spam", copy);
  ASSERT_EQ(foreign.result(), http::status::ok) << foreign.body();
  EXPECT_EQ(json::parse(foreign.body()).at("scan_header").as_string(), "other_message")
      << foreign.body();
}

// User layers replicate like the global model: a train, forget or delete with a user on one
// daemon reaches every daemon, which all end with the same layer. Whether a user's train also
// trains the global model is decided by the daemon that took it (a has train_global_from_users
// on, b off) and carried in the event, so both apply it alike.
TEST(ClusterTest, UserLayersReplicateAndEveryDaemonAppliesThemAlike) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  std::vector<std::string> a_args =
      ClusterArgs(dir.Join("a"), 0, redis->port(), "a", dir.Join("backups-a"));
  a_args.insert(a_args.end(), {"--train-global-from-users", "on"});
  DaemonProcess a = Start(a_args);
  DaemonProcess b = Start(ClusterArgs(dir.Join("b"), 0, redis->port(), "b", dir.Join("backups-b")));
  HttpClient on_a(a.port());
  HttpClient on_b(b.port());
  const auto post = [](HttpClient& client, const std::string& target, const std::string& body) {
    const auto response = client.Send(http::verb::post, target, body);
    EXPECT_EQ(response.result(), http::status::ok) << target << ": " << response.body();
    return response;
  };
  post(on_a, "/train?label=spam&id=g1", "cheap pills now winner");
  post(on_a, "/train?label=ham&id=g2", "lunch at noon with the team");
  const auto learned = post(on_a, "/train?label=spam&id=u1&user=alice", "cheap lunch pills");
  EXPECT_EQ(StatusField(learned), "learned") << learned.body();
  post(on_b, "/train?label=ham&id=u2&user=alice", "team lunch at noon");
  post(on_b, "/train?label=spam&id=u3&user=bob", "the team winner");

  const auto expect_alike = [&](const std::string& what) {
    SCOPED_TRACE(what);
    double seconds = 0;
    ASSERT_TRUE(WaitForConvergence(redis->port(), {a.port(), b.port()}, &seconds));
    for (const std::string target : {"/stats", "/users/alice/stats", "/users/bob/stats"}) {
      const auto from_a = on_a.Send(http::verb::get, target);
      const auto from_b = on_b.Send(http::verb::get, target);
      EXPECT_EQ(from_a.result(), from_b.result()) << target;
      EXPECT_EQ(from_a.body(), from_b.body()) << target;
    }
    for (const std::string user : {"alice", "bob", "carol"}) {
      const std::string target = "/classify?explain=5&user=" + user;
      EXPECT_EQ(WithoutScanId(post(on_a, target, "cheap team lunch pills").body()),
                WithoutScanId(post(on_b, target, "cheap team lunch pills").body()))
          << target;
    }
  };
  ASSERT_NO_FATAL_FAILURE(expect_alike("after the trains"));
  const auto documents = [](HttpClient& client, const std::string& target) {
    return json::parse(client.Send(http::verb::get, target).body()).at("documents").as_int64();
  };
  EXPECT_EQ(documents(on_b, "/stats"), 3);  // g1, g2 and u1 (taken by a, which trains both).
  EXPECT_EQ(documents(on_b, "/users/alice/stats"), 2);
  EXPECT_EQ(documents(on_a, "/users/bob/stats"), 1);

  // Forgetting u1 from alice's layer through b leaves the global model's u1 (b trains users
  // only); deleting alice through a removes her layer everywhere, bob's stays.
  post(on_b, "/forget?id=u1&user=alice", "");
  ASSERT_NO_FATAL_FAILURE(expect_alike("after the forget"));
  EXPECT_EQ(documents(on_a, "/users/alice/stats"), 1);
  EXPECT_EQ(documents(on_a, "/stats"), 3);
  const auto deleted = on_a.Send(http::verb::delete_, "/users/alice");
  EXPECT_EQ(deleted.result(), http::status::ok) << deleted.body();
  ASSERT_NO_FATAL_FAILURE(expect_alike("after the delete"));
  EXPECT_EQ(on_b.Send(http::verb::get, "/users/alice/stats").result(), http::status::not_found);
  EXPECT_EQ(documents(on_b, "/users/bob/stats"), 1);

  // A rollback in bob's layer (of what was trained without a token) replicates too.
  const auto rolled = post(on_a, "/admin/rollback?source=&user=bob", "");
  EXPECT_NE(rolled.body().find("\"forgotten\":1"), std::string::npos) << rolled.body();
  ASSERT_NO_FATAL_FAILURE(expect_alike("after the rollback"));
  EXPECT_EQ(on_b.Send(http::verb::get, "/users/bob/stats").result(), http::status::not_found);
  EXPECT_EQ(documents(on_b, "/stats"), 3);

  EXPECT_EQ(a.Terminate(), 0) << a.Log();
  EXPECT_EQ(b.Terminate(), 0) << b.Log();
}

TEST(ClusterTest, ADaemonWhoseModelEndsBeforeTheTrimmedPartRefusesToStart) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  {
    // What trimming records: the largest entry id it deleted.
    replication::RedisClient client("127.0.0.1", redis->port());
    ASSERT_TRUE(client.Command({"SET", "nbspamd:training:trimmed", "5-0"}).has_value());
  }
  const ProcessExit exit =
      RunToExit(ClusterArgs(dir.Join("fresh"), 0, redis->port(), "fresh", dir.Join("backups")));
  EXPECT_EQ(exit.status, 1) << exit.output;
  EXPECT_NE(exit.output.find("start it from a checkpoint of another daemon"), std::string::npos)
      << exit.output;

  // Redis being down at start-up is not fatal: the daemon serves and keeps trying.
  redis->Stop();
  DaemonProcess daemon =
      Start(ClusterArgs(dir.Join("later"), 0, redis->port(), "later", dir.Join("backups")));
  HttpClient client(daemon.port());
  const auto train = client.Send(http::verb::post, "/train?label=spam", "cheap pills");
  EXPECT_EQ(train.result(), http::status::service_unavailable) << train.body();
  EXPECT_NE(train.body().find("\"unavailable\""), std::string::npos) << train.body();
  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

}  // namespace
}  // namespace nbspamd::testing

namespace nbspamd::testing {
namespace {

// Error-driven training in a cluster: each daemon decides what to count from the model the
// stream's earlier messages left, so all count the same messages.
TEST(ClusterTest, UnderErrorDrivenTrainingEveryDaemonCountsTheSameMessages) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  std::vector<DaemonProcess> daemons;
  for (const char* name : {"a", "b", "c"}) {
    std::vector<std::string> args = ClusterArgs(dir.Join(name), 0, redis->port(), name,
                                                dir.Join(std::string("backups-") + name));
    args.insert(args.end(), {"--train-margin", "1"});
    daemons.push_back(Start(args));
  }
  std::vector<unsigned short> ports;
  for (const DaemonProcess& daemon : daemons) ports.push_back(daemon.port());
  // Messages sent through different daemons at once still give one model everywhere.
  const std::vector<std::string> spam = {"cheap pills now", "cheap pills now", "win a prize now",
                                         "cheap pills now", "win a prize now", "free money click"};
  const std::vector<std::string> ham = {"lunch on friday", "the meeting notes",
                                        "lunch on friday", "project agenda",
                                        "lunch on friday", "the meeting notes"};
  for (std::size_t i = 0; i < spam.size(); ++i) {
    const std::string n = std::to_string(i);
    HttpClient to_spam(ports[i % 3]);
    HttpClient to_ham(ports[(i + 1) % 3]);
    ASSERT_EQ(to_spam.Send(http::verb::post, "/train?label=spam&id=s" + n, spam[i]).result(),
              http::status::ok);
    ASSERT_EQ(to_ham.Send(http::verb::post, "/train?label=ham&id=h" + n, ham[i]).result(),
              http::status::ok);
  }
  double seconds = 0;
  ASSERT_TRUE(WaitForConvergence(redis->port(), ports, &seconds));
  std::string first_stats;
  std::string first_dump;
  for (std::size_t d = 0; d < daemons.size(); ++d) {
    SCOPED_TRACE("daemon " + std::to_string(d));
    HttpClient client(ports[d]);
    const std::string stats = client.Send(http::verb::get, "/stats").body();
    const std::string dump = client.Send(http::verb::get, "/admin/dump").body();
    if (d == 0) {
      first_stats = stats;
      first_dump = dump;
      // Repeats were only checked: fewer documents than messages.
      EXPECT_LT(json::parse(stats).at("documents").as_int64(), 12) << stats;
      EXPECT_GE(json::parse(stats).at("documents").as_int64(), 2) << stats;
    }
    EXPECT_EQ(stats, first_stats);
    EXPECT_EQ(dump, first_dump) << "the dumps differ";
  }
}

// The model expiry through the training stream (docs/STORAGE.md "Ledger retention" and "Token
// expiry"): a retire sent to one daemon and an expire sent to another leave every daemon's model
// byte for byte alike (their dumps are equal), and a retired message cannot be forgotten on any.
TEST(ClusterTest, TheModelExpiryLeavesEveryDaemonByteForByteAlike) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  std::vector<DaemonProcess> daemons;
  for (const char* name : {"a", "b", "c"}) {
    // Words alone: the counts below are counted by hand.
    std::vector<std::string> args = ClusterArgs(dir.Join(name), 0, redis->port(), name,
                                                dir.Join(std::string("backups-") + name));
    args.insert(args.end(), {"--char-ngrams", "0"});
    daemons.push_back(Start(args));
  }
  std::vector<unsigned short> ports;
  for (const DaemonProcess& daemon : daemons) ports.push_back(daemon.port());
  const auto post = [](unsigned short port, const std::string& target,
                       const std::string& body = "") {
    HttpClient client(port);
    return client.Send(http::verb::post, target, body);
  };
  const std::vector<std::string> spam = {"cheap pills now",  "win a prize now", "cheap watches",
                                         "free money click", "pills and prize", "click to win"};
  const std::vector<std::string> ham = {"lunch on friday", "the meeting notes",
                                        "project agenda",  "team lunch notes",
                                        "friday agenda",   "notes of the team"};
  for (std::size_t i = 0; i < spam.size(); ++i) {
    const std::string n = std::to_string(i);
    ASSERT_EQ(post(ports[i % 3], "/train?label=spam&id=s" + n, spam[i]).result(), http::status::ok);
    ASSERT_EQ(post(ports[(i + 1) % 3], "/train?label=ham&id=h" + n, ham[i]).result(),
              http::status::ok);
  }
  // User layers, taught through different daemons: retired and expired by the same events.
  ASSERT_EQ(post(ports[0], "/train?label=spam&id=u0&user=alice", "rare offer watches").result(),
            http::status::ok);
  ASSERT_EQ(post(ports[1], "/train?label=ham&id=u1&user=alice", "lunch picnic friday").result(),
            http::status::ok);
  ASSERT_EQ(post(ports[2], "/train?label=spam&id=b0&user=bob", "cheap offer").result(),
            http::status::ok);
  double seconds = 0;
  ASSERT_TRUE(WaitForConvergence(redis->port(), ports, &seconds));
  const auto stats = [](unsigned short port) {
    HttpClient client(port);
    return client.Send(http::verb::get, "/stats").body();
  };
  const auto user_stats = [](unsigned short port, const std::string& user) {
    HttpClient client(port);
    return client.Send(http::verb::get, "/users/" + user + "/stats").body();
  };
  const std::int64_t vocabulary = json::parse(stats(ports[0])).at("vocabulary").as_int64();
  const std::int64_t alice_vocabulary =
      json::parse(user_stats(ports[0], "alice")).at("vocabulary").as_int64();
  ASSERT_EQ(alice_vocabulary, 6);

  const std::string before = std::to_string(std::time(nullptr) + 60);
  const auto retired = post(ports[0], "/admin/retire?before=" + before);
  ASSERT_EQ(retired.result(), http::status::ok) << retired.body();
  EXPECT_TRUE(json::parse(retired.body()).at("queued").as_bool()) << retired.body();
  ASSERT_TRUE(WaitForConvergence(redis->port(), ports, &seconds));
  const auto expired = post(ports[1], "/admin/expire?max_count=1&before=" + before);
  ASSERT_EQ(expired.result(), http::status::ok) << expired.body();
  ASSERT_TRUE(WaitForConvergence(redis->port(), ports, &seconds));

  const std::string first_stats = stats(ports[0]);
  const std::int64_t after = json::parse(first_stats).at("vocabulary").as_int64();
  EXPECT_LT(after, vocabulary);  // Words seen once went,
  EXPECT_GT(after, 0);           // the others stayed.
  // Each of alice's words was counted once: with token_keep_ham (the default, so the stream's
  // rule carries it) her spam words went from her layer and her ham words stayed; her documents
  // stayed.
  const std::string alice = user_stats(ports[0], "alice");
  EXPECT_EQ(json::parse(alice).at("vocabulary").as_int64(), 3) << alice;
  EXPECT_EQ(json::parse(alice).at("documents").as_int64(), 2) << alice;
  const std::string bob = user_stats(ports[0], "bob");
  std::string first_dump;
  for (std::size_t d = 0; d < daemons.size(); ++d) {
    SCOPED_TRACE("daemon " + std::to_string(d));
    EXPECT_EQ(stats(ports[d]), first_stats);
    EXPECT_EQ(user_stats(ports[d], "alice"), alice);
    EXPECT_EQ(user_stats(ports[d], "bob"), bob);
    HttpClient client(ports[d]);
    const auto dump = client.Send(http::verb::get, "/admin/dump");
    ASSERT_EQ(dump.result(), http::status::ok) << dump.body();
    if (d == 0) first_dump = dump.body();
    EXPECT_EQ(dump.body(), first_dump) << "the dumps differ";
    const std::string metrics = client.Send(http::verb::get, "/metrics").body();
    EXPECT_NE(metrics.find("\nnbspamd_ledger_retired_total 12\n"), std::string::npos);
    EXPECT_NE(metrics.find("\nnbspamd_user_ledger_retired_total 3\n"), std::string::npos);
    // Alice's three spam words and bob's two.
    EXPECT_NE(metrics.find("\nnbspamd_user_expiry_tokens_dropped_total 5\n"), std::string::npos);
    EXPECT_NE(metrics.find("\nnbspamd_expiry_tokens_dropped_total " +
                           std::to_string(vocabulary - after) + "\n"),
              std::string::npos);
  }
  EXPECT_NE(first_dump.find("\nlayer global\n"), std::string::npos) << first_dump.substr(0, 300);
  const auto forget = post(ports[2], "/forget?id=s0");
  EXPECT_EQ(forget.result(), http::status::gone) << forget.body();
  const auto forget_user = post(ports[1], "/forget?id=u0&user=alice");
  EXPECT_EQ(forget_user.result(), http::status::gone) << forget_user.body();
  for (DaemonProcess& daemon : daemons) EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  for (const char* name : {"a", "b", "c"}) {
    const ProcessExit check = RunToExit({"check", "--data-dir", dir.Join(name)});
    EXPECT_EQ(check.status, 0) << name << ": " << check.output;
  }
}

}  // namespace
}  // namespace nbspamd::testing
