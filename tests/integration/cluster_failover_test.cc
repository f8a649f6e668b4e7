// Cluster mode across a Redis failover: a primary, two replicas and three Sentinels (Debian's
// redis-server, the Sentinels in its --sentinel mode), all on 127.0.0.1 and ephemeral ports, and
// three real daemons that find the primary through the Sentinels (cluster_sentinels) and
// acknowledge a train only once WAIT reports it on a replica (cluster_min_replicas, 1 by default
// with Sentinels). Client threads train distinct ids; the primary is killed with SIGKILL in the
// middle of the load and the Sentinels promote a replica; a 503 (or no answer) is retried with
// the same id, as docs/SCALING.md tells clients to. Afterwards every acknowledged id must be
// learned exactly once on every daemon (its ledger lists it, and /stats counts exactly one
// document per id), and the daemons' models must be byte-identical.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <expected>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "replication/redis_client.h"
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

constexpr std::uint32_t kSeed = 20261205;
constexpr int kPoolSize = 200;
constexpr char kMaster[] = "nbspamd";
constexpr auto kEventLimit = std::chrono::seconds(60);

const std::vector<std::string>& Pool() {
  static const std::vector<std::string> pool = MakeMessages(kSeed, kPoolSize);
  return pool;
}

const std::vector<std::string>& TestProbes() {
  static const std::vector<std::string> probes = Probes(Pool(), kSeed + 7);
  return probes;
}

// Polls `done` every 20 ms until it holds; throws, naming `what`, after kEventLimit.
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

// One command to the Redis (or Sentinel) on `port`; nullopt when it fails.
std::optional<replication::RedisReply> Ask(unsigned short port,
                                           const std::vector<std::string>& command) {
  replication::RedisClient redis("127.0.0.1", port, std::chrono::seconds(2));
  auto reply = redis.Command(command);
  if (!reply) return std::nullopt;
  return std::move(*reply);
}

// The folder `name` in `dir`, made.
std::string MakeFolder(const TempDir& dir, const std::string& name) {
  const std::string path = dir.Join(name);
  std::filesystem::create_directories(path);
  return path;
}

// The port of the primary the Sentinel on `sentinel_port` names (0 when it cannot tell).
unsigned short NamedPrimary(unsigned short sentinel_port) {
  const auto reply = Ask(sentinel_port, {"SENTINEL", "get-master-addr-by-name", kMaster});
  if (!reply || reply->elements.size() != 2) return 0;
  return static_cast<unsigned short>(std::stoi(reply->elements[1].text));
}

// How many entries an array answer to `command` on `port` has (-1 when it fails).
int Count(unsigned short port, const std::vector<std::string>& command) {
  const auto reply = Ask(port, command);
  return reply ? static_cast<int>(reply->elements.size()) : -1;
}

// A line of a Redis INFO section, e.g. "connected_slaves" → "2".
std::string InfoField(unsigned short port, const std::string& section, const std::string& name) {
  const auto reply = Ask(port, {"INFO", section});
  if (!reply) return "";
  const std::string marker = name + ":";
  const std::size_t at = reply->text.find(marker);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + marker.size();
  return reply->text.substr(begin, reply->text.find('\r', begin) - begin);
}

std::string LastStreamId(unsigned short redis_port) {
  const auto reply = Ask(redis_port, {"XREVRANGE", "nbspamd:training", "+", "-", "COUNT", "1"});
  if (!reply || reply->elements.empty()) return "";
  return reply->elements[0].elements[0].text;
}

std::string MetricsText(unsigned short port) {
  try {
    HttpClient client(port);
    return client.Send(http::verb::get, "/metrics").body();
  } catch (const std::exception&) {
    return "";
  }
}

std::string AppliedPosition(unsigned short port) {
  const std::string text = MetricsText(port);
  const std::string marker = "nbspamd_cluster_applied_position_info{applied=\"";
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + marker.size();
  return text.substr(begin, text.find('"', begin) - begin);
}

// Every id the global ledger of the daemon on `port` lists (trains without a token: source "").
std::multiset<std::string> LedgerIds(unsigned short port) {
  HttpClient client(port);
  const auto answer = client.Send(http::verb::get, "/admin/learned?source=&limit=100000");
  if (answer.result() != http::status::ok) throw std::runtime_error(answer.body());
  std::multiset<std::string> ids;
  const json::value parsed = json::parse(answer.body());
  if (!parsed.is_object()) throw std::runtime_error("/admin/learned: " + answer.body());
  for (const json::value& m : parsed.at("messages").as_array()) {
    ids.insert(std::string(m.at("id").as_string()));
  }
  return ids;
}

// What the clients had acknowledged: id → label.
class Acknowledged {
 public:
  void Add(const std::string& id, const std::string& label) {
    std::lock_guard lock(mutex_);
    labels_[id] = label;
  }
  std::size_t Size() const {
    std::lock_guard lock(mutex_);
    return labels_.size();
  }
  std::map<std::string, std::string> All() const {
    std::lock_guard lock(mutex_);
    return labels_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> labels_;
};

struct LoadResult {
  int retries = 0;
  std::vector<std::string> failures;
};

// Trains ids "c<client>-<n>", each to a random daemon, until `more` is false; a 503 or a lost
// connection is retried with the same id (and label and text) until a daemon answers 200.
void RunTrainer(const std::vector<unsigned short>& ports, int client, const std::atomic<bool>& more,
                Acknowledged& acknowledged, LoadResult& result) {
  std::mt19937 rng(kSeed + 1000u * static_cast<std::uint32_t>(client + 1));
  std::map<unsigned short, std::unique_ptr<HttpClient>> clients;
  for (int n = 0; more.load() && result.failures.empty(); ++n) {
    const std::string id = "c" + std::to_string(client) + "-" + std::to_string(n);
    const std::string label = (rng() % 2 == 0) ? "spam" : "ham";
    const std::string& text = Pool()[rng() % Pool().size()];
    const auto deadline = std::chrono::steady_clock::now() + kEventLimit;
    bool done = false;
    while (!done) {
      if (std::chrono::steady_clock::now() > deadline) {
        result.failures.push_back(id + " was never acknowledged");
        return;
      }
      const unsigned short port = ports[rng() % ports.size()];
      try {
        auto& http_client = clients[port];
        if (!http_client) http_client = std::make_unique<HttpClient>(port);
        const auto answer = http_client->Send(
            http::verb::post, "/train?count=all&label=" + label + "&id=" + id, text);
        if (answer.result() == http::status::ok) {
          done = true;
        } else if (answer.result() != http::status::service_unavailable) {
          result.failures.push_back(id + ": " + std::to_string(answer.result_int()) + " " +
                                    answer.body());
          return;
        } else if (answer[http::field::retry_after].empty()) {
          result.failures.push_back(id + ": a 503 without Retry-After: " + answer.body());
          return;
        }
      } catch (const std::exception&) {
        clients.erase(port);
      }
      if (!done) {
        ++result.retries;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    acknowledged.Add(id, label);
  }
}

// How many times the Redis on `port` ran XREAD (INFO commandstats; 0 when never, -1 when it
// cannot tell).
long long XreadCalls(unsigned short port) {
  const std::string stats = InfoField(port, "commandstats", "cmdstat_xread");
  if (stats.empty()) return Ask(port, {"PING"}) ? 0 : -1;
  // "calls=N,usec=..."
  const std::size_t at = stats.find("calls=");
  return at == std::string::npos ? -1 : std::stoll(stats.substr(at + 6));
}

bool ReadsAReplica(unsigned short port) {
  return MetricsText(port).find("\nnbspamd_cluster_reading_replica 1\n") != std::string::npos;
}

// The SIGKILL scenario with the daemons reading the stream from `read_from` (cluster_read_from).
void RunFailoverUnderLoad(const std::string& read_from) {
  TempDir dir;
  const auto folder = [&](const std::string& name) { return MakeFolder(dir, name); };
  auto primary = RedisProcess::Start(folder("primary"), FreeLoopbackPort());
  ASSERT_TRUE(primary.has_value()) << primary.error();
  const unsigned short primary_port = primary->port();
  std::vector<RedisProcess> replicas;
  for (int r = 0; r < 2; ++r) {
    auto replica = RedisProcess::StartReplica(folder("replica" + std::to_string(r)),
                                              FreeLoopbackPort(), primary_port);
    ASSERT_TRUE(replica.has_value()) << replica.error();
    replicas.push_back(std::move(*replica));
  }
  std::vector<RedisProcess> sentinels;
  std::string sentinel_list;
  for (int s = 0; s < 3; ++s) {
    auto sentinel = RedisProcess::StartSentinel(folder("sentinel" + std::to_string(s)),
                                                FreeLoopbackPort(), primary_port, kMaster,
                                                /*quorum=*/2, /*down_after_ms=*/1000,
                                                /*failover_timeout_ms=*/3000);
    ASSERT_TRUE(sentinel.has_value()) << sentinel.error();
    sentinel_list += (sentinel_list.empty() ? "" : ",") + std::string("127.0.0.1:") +
                     std::to_string(sentinel->port());
    sentinels.push_back(std::move(*sentinel));
  }
  std::string setup_error;
  try {
    WaitFor("both replicas are in sync", [&] {
      return InfoField(primary_port, "replication", "connected_slaves") == "2" &&
             InfoField(replicas[0].port(), "replication", "master_link_status") == "up" &&
             InfoField(replicas[1].port(), "replication", "master_link_status") == "up";
    });
    // A failover needs each Sentinel to know the replicas and a majority of the others.
    WaitFor("every Sentinel knows both replicas and both other Sentinels", [&] {
      for (const RedisProcess& sentinel : sentinels) {
        if (Count(sentinel.port(), {"SENTINEL", "replicas", kMaster}) != 2) return false;
        if (Count(sentinel.port(), {"SENTINEL", "sentinels", kMaster}) != 2) return false;
      }
      return true;
    });
  } catch (const std::exception& e) {
    setup_error = e.what();
  }
  ASSERT_EQ(setup_error, "");

  // d0 and d1 answer once they applied the train, d2 once Redis (and a replica) has it.
  std::vector<DaemonProcess> daemons;
  std::vector<unsigned short> ports;
  for (int d = 0; d < 3; ++d) {
    auto daemon = DaemonProcess::Start(
        {"--listen", "127.0.0.1:0", "--data-dir", dir.Join("d" + std::to_string(d)), "--threads",
         "2", "--backup-dir", dir.Join("backups"), "--cluster-sentinels", sentinel_list,
         "--cluster-sentinel-master", kMaster, "--cluster-name", "d" + std::to_string(d),
         "--cluster-wait-applied", d < 2 ? "true" : "false", "--cluster-read-from", read_from});
    ASSERT_TRUE(daemon.has_value()) << daemon.error();
    ports.push_back(daemon->port());
    daemons.push_back(std::move(*daemon));
  }
  const bool from_replicas = read_from == "replica";

  constexpr int kTrainers = 4;
  constexpr std::size_t kStep = 150;
  std::atomic<bool> more = true;
  Acknowledged acknowledged;
  std::vector<LoadResult> results(kTrainers);
  std::vector<std::thread> trainers;
  for (int c = 0; c < kTrainers; ++c) {
    trainers.emplace_back([&, c] {
      try {
        RunTrainer(ports, c, more, acknowledged, results[static_cast<std::size_t>(c)]);
      } catch (const std::exception& e) {
        results[static_cast<std::size_t>(c)].failures.push_back(e.what());
      }
    });
  }
  std::string scenario_error;
  unsigned short new_primary = 0;
  std::size_t before_kill = 0;
  double failover_seconds = 0;
  try {
    WaitFor("the first trains were acknowledged", [&] { return acknowledged.Size() >= kStep; });
    // Fan-out: with cluster_read_from replica the stream is read on the replicas, never on the
    // primary (its XREAD count stays 0); with primary, on the primary alone.
    for (unsigned short port : ports) {
      if (ReadsAReplica(port) != from_replicas) {
        throw std::runtime_error("daemon on port " + std::to_string(port) +
                                 (from_replicas ? " does not read" : " reads") + " a replica");
      }
    }
    const long long replica_reads = XreadCalls(replicas[0].port()) + XreadCalls(replicas[1].port());
    const long long primary_reads = XreadCalls(primary_port);
    if (from_replicas ? (primary_reads != 0 || replica_reads <= 0)
                      : (primary_reads <= 0 || replica_reads != 0)) {
      throw std::runtime_error("XREAD calls: primary " + std::to_string(primary_reads) +
                               ", replicas " + std::to_string(replica_reads));
    }
    before_kill = acknowledged.Size();
    const auto killed_at = std::chrono::steady_clock::now();
    primary->Kill();  // SIGKILL mid-load.
    WaitFor("a Sentinel names a promoted replica", [&] {
      new_primary = NamedPrimary(sentinels[0].port());
      return new_primary != 0 && new_primary != primary_port;
    });
    failover_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    const std::size_t at_failover = acknowledged.Size();
    WaitFor("trains are acknowledged again after the failover",
            [&] { return acknowledged.Size() >= at_failover + kStep; });
  } catch (const std::exception& e) {
    scenario_error = e.what();
  }
  more = false;
  for (std::thread& trainer : trainers) trainer.join();
  ASSERT_EQ(scenario_error, "") << daemons[0].Log();
  int retries = 0;
  for (const LoadResult& result : results) {
    for (const std::string& failure : result.failures) ADD_FAILURE() << failure;
    retries += result.retries;
  }
  ASSERT_FALSE(::testing::Test::HasFailure()) << daemons[0].Log();

  // Every daemon applies the new primary's stream to its end.
  std::string converge_error;
  try {
    const std::string last = LastStreamId(new_primary);
    WaitFor("every daemon applied " + last, [&] {
      for (unsigned short port : ports) {
        if (AppliedPosition(port) != last) return false;
      }
      return true;
    });
    // A daemon that read from the promoted replica finds it a primary at its next round and
    // reads from the new primary until a Sentinel has made the replica that is left follow it;
    // then it moves to that replica without ever reporting itself disconnected (asserted below,
    // after the wait).
    WaitFor("every daemon is connected, ready and reads where it was told to", [&] {
      for (unsigned short port : ports) {
        if (MetricsText(port).find("\nnbspamd_cluster_connected 1\n") == std::string::npos) {
          return false;
        }
        if (ReadsAReplica(port) != from_replicas) return false;
        HttpClient client(port);
        if (client.Send(http::verb::get, "/readyz").result() != http::status::ok) return false;
      }
      return true;
    });
  } catch (const std::exception& e) {
    converge_error = e.what();
  }
  ASSERT_EQ(converge_error, "") << daemons[0].Log() << daemons[1].Log() << daemons[2].Log();

  const std::map<std::string, std::string> labels = acknowledged.All();
  std::map<std::string, std::int64_t> documents;
  for (const auto& [id, label] : labels) ++documents[label];
  std::multiset<std::string> expected_ids;
  for (const auto& [id, label] : labels) expected_ids.insert(id);
  const ModelView first = Observe(ports[0], TestProbes());
  for (std::size_t d = 0; d < daemons.size(); ++d) {
    const std::string name = "daemon " + std::to_string(d);
    // Learned exactly once: the ledger lists each acknowledged id once and nothing else, and the
    // document counts are one a message.
    EXPECT_EQ(LedgerIds(ports[d]), expected_ids) << name;
    const ModelView view = Observe(ports[d], TestProbes());
    ExpectDocuments(view, documents);
    if (d > 0) ExpectSameModel(first, view, name);
    const std::string metrics = MetricsText(ports[d]);
    EXPECT_NE(metrics.find("\nnbspamd_cluster_stream_behind 0\n"), std::string::npos) << name;
    EXPECT_NE(metrics.find("\nnbspamd_cluster_connected 1\n"), std::string::npos)
        << name << daemons[d].Log();
    // After the failover, the replica that is left is read.
    EXPECT_EQ(ReadsAReplica(ports[d]), from_replicas) << name;
    HttpClient client(ports[d]);
    EXPECT_EQ(client.Send(http::verb::get, "/readyz").result(), http::status::ok) << name;
  }
  for (DaemonProcess& daemon : daemons) EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  std::printf(
      "[          ] %zu trains acknowledged (%zu before the SIGKILL), %d retries; a Sentinel "
      "named the new primary %.1f s after the kill (reading from the %s)\n",
      labels.size(), before_kill, retries, failover_seconds, read_from.c_str());
}

TEST(ClusterFailoverTest, AnAcknowledgedTrainSurvivesASigkilledPrimaryExactlyOnceEverywhere) {
  RunFailoverUnderLoad("replica");
}

TEST(ClusterFailoverTest, ReadingFromThePrimaryTheSameHolds) { RunFailoverUnderLoad("primary"); }

// cluster_min_replicas without Sentinel: with its replica gone, a train is answered 503
// `unavailable` with Retry-After (WAIT found no replica), counted in /metrics, and nothing is
// applied; once a replica is back the client's retry with the same id is acknowledged, and
// the message is learned exactly once though its event was appended twice.
TEST(ClusterFailoverTest, WithoutEnoughReplicasATrainIs503AndItsRetryIsLearnedOnce) {
  TempDir dir;
  const auto folder = [&](const std::string& name) { return MakeFolder(dir, name); };
  auto primary = RedisProcess::Start(folder("primary"), FreeLoopbackPort());
  ASSERT_TRUE(primary.has_value()) << primary.error();
  const unsigned short replica_port = FreeLoopbackPort();
  auto replica = RedisProcess::StartReplica(folder("replica"), replica_port, primary->port());
  ASSERT_TRUE(replica.has_value()) << replica.error();
  std::string wait_error;
  try {
    // Online on the primary's side too: WAIT counts only those.
    WaitFor("the replica is in sync", [&] {
      return InfoField(replica->port(), "replication", "master_link_status") == "up" &&
             InfoField(primary->port(), "replication", "slave0").find("state=online") !=
                 std::string::npos;
    });
  } catch (const std::exception& e) {
    wait_error = e.what();
  }
  ASSERT_EQ(wait_error, "");
  auto daemon = DaemonProcess::Start(
      {"--listen", "127.0.0.1:0", "--data-dir", dir.Join("d"), "--threads", "2", "--backup-dir",
       dir.Join("backups"), "--cluster-redis", "127.0.0.1:" + std::to_string(primary->port()),
       "--cluster-name", "d", "--cluster-wait-applied", "true", "--cluster-min-replicas", "1",
       "--cluster-replica-timeout-ms", "1000"});
  ASSERT_TRUE(daemon.has_value()) << daemon.error();
  HttpClient client(daemon->port());
  const auto first = client.Send(http::verb::post, "/train?label=spam&id=a", Pool()[0]);
  ASSERT_EQ(first.result(), http::status::ok) << first.body();

  replica->Kill();
  try {
    WaitFor("the primary lost its replica",
            [&] { return InfoField(primary->port(), "replication", "connected_slaves") == "0"; });
  } catch (const std::exception& e) {
    wait_error = e.what();
  }
  ASSERT_EQ(wait_error, "");
  const auto refused = client.Send(http::verb::post, "/train?label=ham&id=b", Pool()[1]);
  EXPECT_EQ(refused.result(), http::status::service_unavailable) << refused.body();
  EXPECT_EQ(refused[http::field::retry_after], "5");
  EXPECT_NE(refused.body().find("\"unavailable\""), std::string::npos) << refused.body();
  EXPECT_NE(refused.body().find("replicas"), std::string::npos) << refused.body();
  EXPECT_NE(MetricsText(daemon->port()).find("\nnbspamd_cluster_replica_wait_failures_total 1\n"),
            std::string::npos);
  // Appended to the stream, but not applied while no replica has it.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ExpectDocuments(Observe(daemon->port(), TestProbes()), {{"spam", 1}, {"ham", 0}});

  auto back = RedisProcess::StartReplica(dir.Join("replica"), replica_port, primary->port());
  ASSERT_TRUE(back.has_value()) << back.error();
  std::optional<HttpResponse> retried;
  for (int attempt = 0; attempt < 100; ++attempt) {
    retried = client.Send(http::verb::post, "/train?label=ham&id=b", Pool()[1]);
    if (retried->result() != http::status::service_unavailable) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(retried->result(), http::status::ok) << retried->body();
  // "b" was appended at every attempt (each 503 too): learned once all the same.
  EXPECT_GE(Count(primary->port(), {"XRANGE", "nbspamd:training", "-", "+"}), 3);
  const std::multiset<std::string> learned = LedgerIds(daemon->port());
  EXPECT_EQ(learned, (std::multiset<std::string>{"a", "b"}));
  ExpectDocuments(Observe(daemon->port(), TestProbes()), {{"spam", 1}, {"ham", 1}});
  EXPECT_EQ(daemon->Terminate(), 0) << daemon->Log();
}

// A daemon of one Redis `redis_port` (no Sentinel) that reads the stream from a replica.
std::expected<DaemonProcess, std::string> StartReplicaReader(const TempDir& dir,
                                                             unsigned short redis_port) {
  return DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", dir.Join("d"), "--threads",
                               "2", "--backup-dir", dir.Join("backups"), "--cluster-redis",
                               "127.0.0.1:" + std::to_string(redis_port), "--cluster-name", "d",
                               "--cluster-wait-applied", "true", "--cluster-read-from", "replica"});
}

// Samples the daemon on `port` every 20 ms until `done(metrics)` or `within` passes: "" when
// its cluster_connected gauge and /readyz held throughout, else which dropped first and when.
std::string FirstGap(unsigned short port, std::chrono::seconds within,
                     const std::function<bool(const std::string&)>& done) {
  HttpClient client(port);
  const auto deadline = std::chrono::steady_clock::now() + within;
  for (int samples = 1; std::chrono::steady_clock::now() < deadline; ++samples) {
    const std::string metrics = MetricsText(port);
    if (metrics.find("\nnbspamd_cluster_connected 1\n") == std::string::npos) {
      return "disconnected at sample " + std::to_string(samples);
    }
    if (client.Send(http::verb::get, "/readyz").result() != http::status::ok) {
      return "not ready at sample " + std::to_string(samples);
    }
    if (done(metrics)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

// The daemon of StartReplicaReader, which learned "a" as spam: "b" is acknowledged as ham once
// applied from the stream, the model holds both and nothing else, and the daemon never logged a
// lost connection.
void ExpectASecondTrainAndNoRetry(DaemonProcess& daemon) {
  HttpClient client(daemon.port());
  const auto second = client.Send(http::verb::post, "/train?label=ham&id=b", Pool()[1]);
  ASSERT_EQ(second.result(), http::status::ok) << second.body();
  EXPECT_EQ(LedgerIds(daemon.port()), (std::multiset<std::string>{"a", "b"}));
  ExpectDocuments(Observe(daemon.port(), TestProbes()), {{"spam", 1}, {"ham", 1}});
  EXPECT_EQ(daemon.Log().find("retrying"), std::string::npos) << daemon.Log();
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

// cluster_read_from replica with no replica reads the primary; a replica that appears is read
// from at the daemon's next round, and the move is no loss of the connection: /readyz never
// turns 503 and the cluster_connected gauge never drops on the way (each sampled every 20 ms;
// a disconnection lasts at least the 200 ms pause before reconnecting).
TEST(ClusterFailoverTest, AReplicaThatAppearsIsReadWithoutADisconnection) {
  TempDir dir;
  const auto folder = [&](const std::string& name) { return MakeFolder(dir, name); };
  auto primary = RedisProcess::Start(folder("primary"), FreeLoopbackPort());
  ASSERT_TRUE(primary.has_value()) << primary.error();
  auto daemon = StartReplicaReader(dir, primary->port());
  ASSERT_TRUE(daemon.has_value()) << daemon.error();
  HttpClient client(daemon->port());
  const auto first = client.Send(http::verb::post, "/train?label=spam&id=a", Pool()[0]);
  ASSERT_EQ(first.result(), http::status::ok) << first.body();
  EXPECT_FALSE(ReadsAReplica(daemon->port()));

  auto replica = RedisProcess::StartReplica(folder("replica"), FreeLoopbackPort(), primary->port());
  ASSERT_TRUE(replica.has_value()) << replica.error();
  const std::string gap =
      FirstGap(daemon->port(), std::chrono::seconds(30), [](const std::string& metrics) {
        return metrics.find("\nnbspamd_cluster_reading_replica 1\n") != std::string::npos;
      });
  EXPECT_EQ(gap, "") << daemon->Log();
  ASSERT_TRUE(ReadsAReplica(daemon->port())) << daemon->Log();
  // Read from the replica now: a train is acknowledged once applied from it.
  ExpectASecondTrainAndNoRetry(*daemon);
}

// A Sentinel ends each reconfiguration of a Redis (SLAVEOF, at every failover) with CLIENT KILL
// TYPE normal, so a daemon reading from a replica loses that connection then. That is no loss of
// the cluster while the primary answers: the daemon chooses a replica again at once (the
// primary meanwhile), and /readyz and the cluster_connected gauge never drop (sampled every
// 20 ms; a disconnection lasts at least the 200 ms pause before reconnecting).
TEST(ClusterFailoverTest, AReplicaThatDropsItsClientsIsReadAgainWithoutADisconnection) {
  TempDir dir;
  const auto folder = [&](const std::string& name) { return MakeFolder(dir, name); };
  auto primary = RedisProcess::Start(folder("primary"), FreeLoopbackPort());
  ASSERT_TRUE(primary.has_value()) << primary.error();
  auto replica = RedisProcess::StartReplica(folder("replica"), FreeLoopbackPort(), primary->port());
  ASSERT_TRUE(replica.has_value()) << replica.error();
  auto daemon = StartReplicaReader(dir, primary->port());
  ASSERT_TRUE(daemon.has_value()) << daemon.error();
  HttpClient client(daemon->port());
  WaitFor("the daemon reads the replica", [&] { return ReadsAReplica(daemon->port()); });
  const auto first = client.Send(http::verb::post, "/train?label=spam&id=a", Pool()[0]);
  ASSERT_EQ(first.result(), http::status::ok) << first.body();
  const long long reads_before = XreadCalls(replica->port());

  const auto killed = Ask(replica->port(), {"CLIENT", "KILL", "TYPE", "normal"});
  ASSERT_TRUE(killed.has_value());
  ASSERT_GE(killed->integer, 1);  // The daemon's reading connection at least.
  const std::string gap =
      FirstGap(daemon->port(), std::chrono::seconds(2), [](const std::string&) { return false; });
  EXPECT_EQ(gap, "") << daemon->Log();
  // Reading the replica again, on a new connection: a train is acknowledged once applied from it.
  WaitFor("the daemon reads the replica again", [&] {
    return ReadsAReplica(daemon->port()) && XreadCalls(replica->port()) > reads_before;
  });
  ExpectASecondTrainAndNoRetry(*daemon);
}

// The Redis password comes from cluster_redis_password_file: with it a train is acknowledged;
// with a wrong one it is 503 (the daemon keeps serving and retrying), and no log line holds
// either password.
TEST(ClusterFailoverTest, TheRedisPasswordComesFromItsFileAndIsNeverLogged) {
  TempDir dir;
  auto redis = RedisProcess::StartReplica(dir.path().string(), FreeLoopbackPort(), 0,
                                          {"--requirepass", "right-0f9c2e"});
  ASSERT_TRUE(redis.has_value()) << redis.error();
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.Join(name)) << text << "\n";
    return dir.Join(name);
  };
  const auto daemon_args = [&](const std::string& name, const std::string& password_file) {
    return std::vector<std::string>{"--listen",
                                    "127.0.0.1:0",
                                    "--data-dir",
                                    dir.Join(name),
                                    "--backup-dir",
                                    dir.Join("backups"),
                                    "--cluster-redis",
                                    "127.0.0.1:" + std::to_string(redis->port()),
                                    "--cluster-name",
                                    name,
                                    "--cluster-redis-password-file",
                                    password_file};
  };
  auto right = DaemonProcess::Start(daemon_args("right", write("right.pw", "right-0f9c2e")));
  ASSERT_TRUE(right.has_value()) << right.error();
  HttpClient to_right(right->port());
  const auto queued = to_right.Send(http::verb::post, "/train?label=spam&id=p", Pool()[0]);
  EXPECT_EQ(queued.result(), http::status::ok) << queued.body();

  auto wrong = DaemonProcess::Start(daemon_args("wrong", write("wrong.pw", "wrong-77a1d4")));
  ASSERT_TRUE(wrong.has_value()) << wrong.error();
  HttpClient to_wrong(wrong->port());
  const auto refused = to_wrong.Send(http::verb::post, "/train?label=spam&id=q", Pool()[1]);
  EXPECT_EQ(refused.result(), http::status::service_unavailable) << refused.body();
  // Classification does not touch Redis: the empty model's own answer (409), not a 503.
  EXPECT_EQ(to_wrong.Send(http::verb::post, "/classify", Pool()[1]).result(),
            http::status::conflict);
  for (DaemonProcess* daemon : {&*right, &*wrong}) {
    EXPECT_EQ(daemon->Terminate(), 0) << daemon->Log();
    EXPECT_EQ(daemon->Log().find("right-0f9c2e"), std::string::npos) << daemon->Log();
    EXPECT_EQ(daemon->Log().find("wrong-77a1d4"), std::string::npos) << daemon->Log();
  }
  EXPECT_NE(wrong->Log().find("WRONGPASS"), std::string::npos) << wrong->Log();
}

// A stream that lost the entries a daemon applied (here: Redis killed and another, without them,
// started on its port, as after a failover to a replica that lacked them) is detected when the
// daemon connects again: it stops applying,
// /readyz is degraded with "cluster: stream behind this daemon", the metric says 1, trains
// answer 503, and entries appended meanwhile are not applied. Once the stream holds its
// position again the daemon follows it again.
// Both passwords from their files: the sentinels' (requirepass on the Sentinel) and the
// primary's (requirepass there, auth-pass in the Sentinel). A daemon with the right pair trains;
// one with a wrong Sentinel password cannot find the primary (503, the Sentinel's refusal in its
// log); neither password is ever logged.
TEST(ClusterFailoverTest, TheSentinelPasswordComesFromItsFileAndIsNeverLogged) {
  TempDir dir;
  const auto folder = [&](const std::string& name) { return MakeFolder(dir, name); };
  const std::string redis_password = "redis-5b1e9a";
  const std::string sentinel_password = "sentinel-c4d270";
  auto primary = RedisProcess::StartReplica(folder("primary"), FreeLoopbackPort(), 0,
                                            {"--requirepass", redis_password});
  ASSERT_TRUE(primary.has_value()) << primary.error();
  auto sentinel = RedisProcess::StartSentinel(
      folder("sentinel"), FreeLoopbackPort(), primary->port(), kMaster, /*quorum=*/1,
      /*down_after_ms=*/5000, /*failover_timeout_ms=*/10000,
      {"requirepass " + sentinel_password,
       std::string("sentinel auth-pass ") + kMaster + " " + redis_password});
  ASSERT_TRUE(sentinel.has_value()) << sentinel.error();
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.Join(name)) << text << "\n";
    return dir.Join(name);
  };
  const std::string redis_file = write("redis.pw", redis_password);
  const auto start = [&](const std::string& name, const std::string& sentinel_file) {
    return DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", dir.Join(name),
                                 "--backup-dir", dir.Join("backups"), "--cluster-sentinels",
                                 "127.0.0.1:" + std::to_string(sentinel->port()),
                                 "--cluster-sentinel-master", kMaster, "--cluster-name", name,
                                 "--cluster-min-replicas", "0", "--cluster-redis-password-file",
                                 redis_file, "--cluster-sentinel-password-file", sentinel_file});
  };
  auto right = start("right", write("sentinel.pw", sentinel_password));
  ASSERT_TRUE(right.has_value()) << right.error();
  HttpClient to_right(right->port());
  const auto queued = to_right.Send(http::verb::post, "/train?label=spam&id=s", Pool()[0]);
  EXPECT_EQ(queued.result(), http::status::ok) << queued.body() << right->Log();

  auto wrong = start("wrong", write("wrong.pw", "wrong-9e0f11"));
  ASSERT_TRUE(wrong.has_value()) << wrong.error();
  HttpClient to_wrong(wrong->port());
  const auto refused = to_wrong.Send(http::verb::post, "/train?label=spam&id=t", Pool()[1]);
  EXPECT_EQ(refused.result(), http::status::service_unavailable) << refused.body();
  for (DaemonProcess* daemon : {&*right, &*wrong}) {
    EXPECT_EQ(daemon->Terminate(), 0) << daemon->Log();
    for (const std::string& secret :
         {redis_password, sentinel_password, std::string("wrong-9e0f11")}) {
      EXPECT_EQ(daemon->Log().find(secret), std::string::npos) << daemon->Log();
    }
  }
  EXPECT_NE(wrong->Log().find("no sentinel named the primary"), std::string::npos) << wrong->Log();
}

TEST(ClusterFailoverTest, AStreamThatLostAppliedEntriesIsReportedNotFollowed) {
  TempDir dir;
  auto redis = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis.has_value()) << redis.error();
  auto daemon = DaemonProcess::Start(
      {"--listen", "127.0.0.1:0", "--data-dir", dir.Join("d"), "--threads", "2", "--backup-dir",
       dir.Join("backups"), "--cluster-redis", "127.0.0.1:" + std::to_string(redis->port()),
       "--cluster-name", "d", "--cluster-wait-applied", "true"});
  ASSERT_TRUE(daemon.has_value()) << daemon.error();
  HttpClient client(daemon->port());
  for (int i = 0; i < 3; ++i) {
    const auto trained = client.Send(http::verb::post, "/train?label=spam&id=m" + std::to_string(i),
                                     Pool()[static_cast<std::size_t>(i)]);
    ASSERT_EQ(trained.result(), http::status::ok) << trained.body();
  }
  // The answer comes once the entry is applied; /metrics' position a moment later.
  const std::string applied = LastStreamId(redis->port());
  std::string wait_error;
  try {
    WaitFor("the daemon's position is " + applied,
            [&] { return AppliedPosition(daemon->port()) == applied; });
  } catch (const std::exception& e) {
    wait_error = e.what();
  }
  ASSERT_EQ(wait_error, "");
  const auto entry = Ask(redis->port(), {"XRANGE", "nbspamd:training", applied, applied});
  ASSERT_TRUE(entry && entry->elements.size() == 1);
  const std::string payload = entry->elements[0].elements[1].elements[1].text;

  // Redis dies and another comes up on its port without those entries (as a promoted replica
  // that lacked them would), and a newer entry arrives, numbered above the daemon's position.
  const unsigned short redis_port = redis->port();
  redis->Kill();
  std::filesystem::create_directories(dir.Join("other"));
  redis = RedisProcess::Start(dir.Join("other"), redis_port);
  ASSERT_TRUE(redis.has_value()) << redis.error();
  ASSERT_TRUE(Ask(redis_port, {"XADD", "nbspamd:training", "*", "e", payload}).has_value());
  const std::string newer = LastStreamId(redis_port);
  try {
    WaitFor("the daemon reports the stream behind it", [&] {
      return MetricsText(daemon->port()).find("\nnbspamd_cluster_stream_behind 1\n") !=
             std::string::npos;
    });
  } catch (const std::exception& e) {
    wait_error = e.what();
  }
  ASSERT_EQ(wait_error, "") << daemon->Log();
  const auto ready = client.Send(http::verb::get, "/readyz");
  EXPECT_EQ(ready.result(), http::status::service_unavailable) << ready.body();
  EXPECT_NE(ready.body().find("cluster: stream behind this daemon: the training stream "
                              "'nbspamd:training' lacks the entry " +
                              applied),
            std::string::npos)
      << ready.body();
  const auto refused = client.Send(http::verb::post, "/train?label=ham&id=later", Pool()[9]);
  EXPECT_EQ(refused.result(), http::status::service_unavailable) << refused.body();
  EXPECT_FALSE(refused[http::field::retry_after].empty());
  EXPECT_EQ(AppliedPosition(daemon->port()), applied);  // The newer entry is not applied.
  EXPECT_NE(daemon->Log().find("stream behind this daemon"), std::string::npos);

  // The stream restored (its entries again, in order): followed again, the newer entry too.
  ASSERT_TRUE(Ask(redis_port, {"DEL", "nbspamd:training"}).has_value());
  ASSERT_TRUE(Ask(redis_port, {"XADD", "nbspamd:training", applied, "e", payload}));
  ASSERT_TRUE(Ask(redis_port, {"XADD", "nbspamd:training", newer, "e", payload}));
  try {
    WaitFor("the daemon follows the restored stream",
            [&] { return AppliedPosition(daemon->port()) == newer; });
  } catch (const std::exception& e) {
    wait_error = e.what();
  }
  ASSERT_EQ(wait_error, "") << daemon->Log();
  EXPECT_EQ(client.Send(http::verb::get, "/readyz").result(), http::status::ok);
  EXPECT_EQ(daemon->Terminate(), 0) << daemon->Log();
}

}  // namespace
}  // namespace nbspamd::testing
