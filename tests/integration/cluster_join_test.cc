// Joining a cluster by itself (server/cluster_join.h, docs/SCALING.md "Joining a cluster"), end
// to end: a real redis-server and real nbspamd daemons on 127.0.0.1. A daemon started with an
// empty folder and cluster_join_from fetches a live peer's checkpoint over HTTP (POST
// /admin/checkpoint, GET /admin/checkpoint/{id}/{file}), replays the stream from its position and
// ends with the peer's model byte for byte; so does one whose model the stream was trimmed past
// (its old folder moved aside). Transfers go through a TCP relay of the test's that breaks them
// off or damages a byte, as a network would: a broken transfer resumes (Range), a damaged file is
// fetched again, a peer that does not answer is skipped for the next; a refused token, a file
// that keeps arriving damaged or a SIGTERM while waiting for a peer ends the daemon at start-up,
// non-zero, with one clear line and no model installed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
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
namespace fs = std::filesystem;

constexpr std::uint32_t kJoinSeed = 20261205;
constexpr char kJoinSecret[] = "join-secret-0123456789";
constexpr char kStream[] = "nbspamd:training";

const std::vector<std::string>& JoinPool() {
  static const std::vector<std::string> pool = MakeMessages(kJoinSeed, 400);
  return pool;
}

const std::vector<std::string>& JoinProbes() {
  static const std::vector<std::string> probes = Probes(JoinPool(), kJoinSeed + 1);
  return probes;
}

// A TCP relay on 127.0.0.1 in front of a daemon, through which a joining daemon fetches a
// checkpoint: the first `faulty` transfers of an .sst file are broken off after `cut_after`
// bytes of the answer (kCut) or have their last byte flipped (kCorrupt); everything else passes
// as it is. Each connection carries one request (the joining daemon closes after each).
class FaultyRelay {
 public:
  enum class Fault { kCut, kCorrupt };

  FaultyRelay(unsigned short target, Fault fault, int faulty, std::size_t cut_after = 0)
      : target_(target), fault_(fault), faulty_(faulty), cut_after_(cut_after) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("the relay cannot listen");
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  FaultyRelay(const FaultyRelay&) = delete;
  FaultyRelay& operator=(const FaultyRelay&) = delete;
  ~FaultyRelay() {
    stop_ = true;
    acceptor_.join();
    ::close(listener_);
    std::lock_guard lock(mutex_);
    for (std::thread& worker : workers_) worker.join();
  }

  [[nodiscard]] unsigned short port() const { return port_; }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Transfers damaged so far.
  [[nodiscard]] int Faults() const { return faults_.load(); }

 private:
  void Accept() {
    while (!stop_) {
      pollfd ready{.fd = listener_, .events = POLLIN, .revents = 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      std::lock_guard lock(mutex_);
      workers_.emplace_back([this, client] { Serve(client); });
    }
  }

  static void SendAll(int fd, const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
      if (sent <= 0) return;
      data += sent;
      size -= static_cast<std::size_t>(sent);
    }
  }

  void Serve(int client) {
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(target_);
    char buffer[16384];
    if (::connect(server, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      std::string request;
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        request.append(buffer, static_cast<std::size_t>(got));
      }
      SendAll(server, request.data(), request.size());
      const bool sst = request.starts_with("GET /admin/checkpoint/") &&
                       request.find(".sst HTTP/") != std::string::npos;
      int done = faults_.load();
      while (sst && done < faulty_ && !faults_.compare_exchange_weak(done, done + 1)) {
      }
      const bool faulty = sst && done < faulty_;
      std::size_t relayed = 0;
      std::optional<char> held;
      for (ssize_t got; (got = ::recv(server, buffer, sizeof buffer, 0)) > 0;) {
        auto size = static_cast<std::size_t>(got);
        if (faulty && fault_ == Fault::kCut) {
          size = std::min(size, cut_after_ - relayed);
          SendAll(client, buffer, size);
          relayed += size;
          if (relayed >= cut_after_) break;
        } else if (faulty && fault_ == Fault::kCorrupt) {
          if (held) SendAll(client, &*held, 1);
          SendAll(client, buffer, size - 1);
          held = buffer[size - 1];
        } else {
          SendAll(client, buffer, size);
        }
      }
      if (held) {
        const char flipped = static_cast<char>(*held ^ 0x01);
        SendAll(client, &flipped, 1);
      }
    }
    ::close(server);
    ::shutdown(client, SHUT_RDWR);
    ::close(client);
  }

  const unsigned short target_;
  const Fault fault_;
  const int faulty_;
  const std::size_t cut_after_;
  int listener_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stop_ = false;
  std::atomic<int> faults_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
};

class ClusterJoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto redis = RedisProcess::Start(dir_.path().string(), FreeLoopbackPort());
    ASSERT_TRUE(redis.has_value()) << redis.error();
    redis_.emplace(std::move(*redis));
    std::ofstream(dir_.Join("join.token")) << kJoinSecret << "\n";
    std::ofstream(dir_.Join("wrong.token")) << "not-the-secret-0123456789\n";
  }

  // A cluster daemon on `data_dir` that answers once applied, accepting kJoinSecret, joining
  // from `join_from` ("" = never) with the token file `token` ("" = none).
  std::vector<std::string> Args(const std::string& data_dir, const std::string& name,
                                const std::string& join_from = "",
                                const std::string& token = "join.token") {
    std::vector<std::string> args = {"--listen",
                                     "127.0.0.1:0",
                                     "--data-dir",
                                     data_dir,
                                     "--threads",
                                     "2",
                                     "--cluster-redis",
                                     "127.0.0.1:" + std::to_string(redis_->port()),
                                     "--cluster-name",
                                     name,
                                     "--cluster-wait-applied",
                                     "true",
                                     "--auth-tokens",
                                     std::string("joiner:") + kJoinSecret};
    if (!join_from.empty()) {
      args.insert(args.end(),
                  {"--cluster-join-from", join_from, "--cluster-join-timeout-seconds", "30"});
      if (!token.empty()) args.insert(args.end(), {"--cluster-join-token-file", dir_.Join(token)});
    }
    return args;
  }

  static DaemonProcess Start(const std::vector<std::string>& args) {
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  // Trains pool messages [from, to) on the daemon at `port`; each must be learned, and counted
  // (count=all) so that the expected counts are exact.
  static void Train(unsigned short port, int from, int to) {
    HttpClient client(port);
    for (int i = from; i < to; ++i) {
      const auto answer =
          client.Send(http::verb::post,
                      std::string("/train?count=all&label=") + (i % 3 == 0 ? "ham" : "spam") +
                          "&id=m" + std::to_string(i),
                      JoinPool()[static_cast<std::size_t>(i)], "text/plain",
                      {{"Authorization", std::string("Bearer ") + kJoinSecret}});
      ASSERT_EQ(answer.result(), http::status::ok) << answer.body();
    }
  }

  std::string LastStreamId() {
    replication::RedisClient redis("127.0.0.1", redis_->port());
    auto reply = redis.Command({"XREVRANGE", kStream, "+", "-", "COUNT", "1"});
    if (!reply || reply->elements.empty()) return "";
    return reply->elements[0].elements[0].text;
  }

  // Waits (at most 60 s) until the daemon at `port` has applied the stream's last entry.
  bool WaitApplied(unsigned short port) {
    const std::string last = LastStreamId();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      HttpClient client(port);
      const std::string text = client.Send(http::verb::get, "/metrics").body();
      if (text.find("nbspamd_cluster_applied_position_info{applied=\"" + last + "\"") !=
          std::string::npos) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // A sample of /metrics (-1 when absent).
  static double Metric(unsigned short port, const std::string& sample) {
    HttpClient client(port);
    const std::string text = client.Send(http::verb::get, "/metrics").body();
    const std::size_t at = text.find("\n" + sample + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + sample.size() + 2));
  }

  // Whether `path` holds no model and nothing of one half fetched beside it.
  static bool NoModelIn(const std::string& path) {
    const fs::path dir(path);
    return !fs::exists(dir / "CURRENT") &&
           !fs::exists(dir.parent_path() / ("." + dir.filename().string() + ".joining"));
  }

  TempDir dir_;
  std::optional<RedisProcess> redis_;
};

TEST_F(ClusterJoinTest, ADaemonWithAnEmptyFolderJoinsFromAPeerAndFollowsTheStream) {
  DaemonProcess a = Start(Args(dir_.Join("a"), "a"));
  constexpr int kLearned = 300;
  Train(a.port(), 0, kLearned);

  const auto begin = std::chrono::steady_clock::now();
  DaemonProcess b =
      Start(Args(dir_.Join("b"), "b", "http://127.0.0.1:" + std::to_string(a.port())));
  ASSERT_TRUE(WaitApplied(b.port())) << b.Log();
  const double join_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_NE(b.Log().find("cluster join: joined from http://127.0.0.1:" + std::to_string(a.port())),
            std::string::npos)
      << b.Log();
  EXPECT_EQ(b.Log().find(kJoinSecret), std::string::npos);  // The token is never logged.
  // Done with it, b let a remove its checkpoint at once.
  EXPECT_NE(a.Log().find("released by source 'joiner'"), std::string::npos) << a.Log();
  // The model came whole from the checkpoint, which holds the stream's end: nothing replayed.
  EXPECT_EQ(Metric(b.port(), "nbspamd_cluster_applied_events_total"), 0) << b.Log();
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(b.port(), JoinProbes()),
                  "b joined from a");

  // Then it follows the stream, trains through it, and a restart does not join again.
  Train(a.port(), kLearned, kLearned + 20);
  Train(b.port(), kLearned + 20, kLearned + 40);
  ASSERT_TRUE(WaitApplied(a.port()) && WaitApplied(b.port()));
  const ModelView after = Observe(a.port(), JoinProbes());
  ExpectSameModel(after, Observe(b.port(), JoinProbes()), "b following the stream");
  ExpectDocuments(after, {{"spam", 226}, {"ham", 114}});
  EXPECT_EQ(b.Terminate(), 0) << b.Log();
  DaemonProcess again =
      Start(Args(dir_.Join("b"), "b", "http://127.0.0.1:" + std::to_string(a.port())));
  EXPECT_EQ(again.Log().find("cluster join:"), std::string::npos) << again.Log();
  ASSERT_TRUE(WaitApplied(again.port()));
  ExpectSameModel(after, Observe(again.port(), JoinProbes()), "b restarted");
  const std::string log = b.Log();
  const std::size_t joined = log.find("cluster join: joined from");
  const std::string line =
      joined == std::string::npos ? "" : log.substr(joined, log.find('"', joined) - joined);
  std::printf(
      "[          ] %d trains: b started, joined and applied the stream's end in %.2f s (%s)\n",
      kLearned, join_seconds, line.c_str());
}

TEST_F(ClusterJoinTest, BrokenOffAndDamagedTransfersAreResumedOrFetchedAgain) {
  DaemonProcess a = Start(Args(dir_.Join("a"), "a"));
  Train(a.port(), 0, 200);
  const std::string file_requests =
      "nbspamd_http_requests_total{endpoint=\"/admin/checkpoint/{id}/{file}\",status=";

  // The first peer listed does not answer; the second's first two .sst transfers break off
  // after 700 bytes of the answer: resumed from where they broke off (206 answers).
  FaultyRelay cutting(a.port(), FaultyRelay::Fault::kCut, 2, 700);
  const RefusingLoopbackPort refusing;
  const std::string dead = refusing.url();
  DaemonProcess b = Start(Args(dir_.Join("b"), "b", dead + "," + cutting.url()));
  ASSERT_TRUE(WaitApplied(b.port())) << b.Log();
  EXPECT_EQ(cutting.Faults(), 2);
  EXPECT_NE(b.Log().find(dead + ": no answer"), std::string::npos) << b.Log();
  EXPECT_NE(b.Log().find("broke off at byte"), std::string::npos) << b.Log();
  EXPECT_NE(b.Log().find("; resuming"), std::string::npos) << b.Log();
  EXPECT_GE(Metric(a.port(), file_requests + "\"2xx\"}"), 1) << "no 206 answer: nothing resumed";
  EXPECT_NE(b.Log().find("joined from " + cutting.url()), std::string::npos) << b.Log();
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(b.port(), JoinProbes()),
                  "b joined through broken transfers");

  // A damaged .sst (its last byte flipped on the way) fails its SHA-256 and is fetched again.
  FaultyRelay damaging(a.port(), FaultyRelay::Fault::kCorrupt, 1);
  DaemonProcess c = Start(Args(dir_.Join("c"), "c", damaging.url()));
  ASSERT_TRUE(WaitApplied(c.port())) << c.Log();
  EXPECT_EQ(damaging.Faults(), 1);
  EXPECT_NE(c.Log().find("but the manifest says"), std::string::npos) << c.Log();
  EXPECT_NE(c.Log().find("; fetching it again"), std::string::npos) << c.Log();
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(c.port(), JoinProbes()),
                  "c joined after a damaged file");
}

TEST_F(ClusterJoinTest, ARefusedTokenOrAFileThatKeepsArrivingDamagedEndsTheDaemonWithoutAModel) {
  DaemonProcess a = Start(Args(dir_.Join("a"), "a"));
  Train(a.port(), 0, 50);
  const std::string peer = "http://127.0.0.1:" + std::to_string(a.port());

  const ProcessExit refused =
      RunToExit(Args(dir_.Join("b"), "b", peer, "wrong.token"), std::chrono::seconds(60));
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_NE(refused.output.find("nbspamd: cannot join the cluster (no model in "),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find(peer + ": it refused the token of cluster_join_token_file"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(refused.output.find("not-the-secret"), std::string::npos);
  EXPECT_TRUE(NoModelIn(dir_.Join("b")));

  const ProcessExit tokenless =
      RunToExit(Args(dir_.Join("b"), "b", peer, ""), std::chrono::seconds(60));
  EXPECT_EQ(tokenless.status, 1) << tokenless.output;
  EXPECT_NE(tokenless.output.find("it wants a token"), std::string::npos) << tokenless.output;
  EXPECT_TRUE(NoModelIn(dir_.Join("b")));

  FaultyRelay damaging(a.port(), FaultyRelay::Fault::kCorrupt, 1000);
  const ProcessExit damaged =
      RunToExit(Args(dir_.Join("b"), "b", damaging.url()), std::chrono::seconds(60));
  EXPECT_EQ(damaged.status, 1) << damaged.output;
  EXPECT_NE(damaged.output.find("nbspamd: cannot join the cluster"), std::string::npos)
      << damaged.output;
  EXPECT_NE(damaged.output.find("SHA-256"), std::string::npos) << damaged.output;
  EXPECT_EQ(damaging.Faults(), 2);  // Fetched once again, then given up.
  EXPECT_TRUE(NoModelIn(dir_.Join("b")));

  // A stop asked for while the daemon waits for a peer that does not answer ends the join at
  // once, not when cluster_join_timeout_seconds (30 s here) has passed.
  // (A stream marked trimmed makes the join necessary: without it a daemon with no model would
  // replay the stream from the beginning rather than wait.)
  {
    replication::RedisClient redis("127.0.0.1", redis_->port());
    ASSERT_TRUE(redis.Command({"SET", std::string(kStream) + ":trimmed", "1-0"}).has_value());
  }
  const std::string log_path = dir_.Join("stopped.log");
  const RefusingLoopbackPort refusing;
  std::vector<std::string> args = Args(dir_.Join("b"), "b", refusing.url());
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    std::string binary = DaemonBinary();
    std::vector<char*> argv = {binary.data()};
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  const auto log_text = [&] {
    std::ifstream in(log_path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto waited = std::chrono::steady_clock::now();
  while (log_text().find("no answer") == std::string::npos &&
         std::chrono::steady_clock::now() - waited < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGTERM);
  const auto stopped = std::chrono::steady_clock::now();
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - stopped < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double stop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  if (reaped != pid) {  // Still running: not stopped.
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  EXPECT_EQ(reaped, pid) << log_text();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << log_text();
  EXPECT_LT(stop_seconds, 5.0) << log_text();
  EXPECT_NE(log_text().find("stopped by a signal while joining"), std::string::npos) << log_text();
  EXPECT_TRUE(NoModelIn(dir_.Join("b")));

  // The peer is none the worse.
  HttpClient client(a.port());
  EXPECT_EQ(client.Send(http::verb::get, "/readyz").result(), http::status::ok);
}

// The first daemons of a new cluster each name the others in cluster_join_from, and none has a
// checkpoint to give yet: on a stream never trimmed a daemon with no model does not wait for
// them (which would keep every one of them from starting) but replays the stream from the
// beginning, and ends with the same model.
TEST_F(ClusterJoinTest, WithNoPeerAnsweringADaemonOnAStreamNeverTrimmedReplaysItFromTheStart) {
  DaemonProcess a = Start(Args(dir_.Join("a"), "a"));
  Train(a.port(), 0, 60);
  const RefusingLoopbackPort refusing;
  const std::string nobody = refusing.url();
  const auto begin = std::chrono::steady_clock::now();
  DaemonProcess b = Start(Args(dir_.Join("b"), "b", nobody));
  const double started =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_LT(started, 20.0) << b.Log();  // Not cluster_join_timeout_seconds (30 s) of waiting.
  EXPECT_NE(b.Log().find("was never trimmed, so this daemon replays it from the beginning"),
            std::string::npos)
      << b.Log();
  ASSERT_TRUE(WaitApplied(b.port())) << b.Log();
  EXPECT_EQ(Metric(b.port(), "nbspamd_cluster_applied_events_total"), 60) << b.Log();
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(b.port(), JoinProbes()),
                  "b replayed the stream");
}

TEST_F(ClusterJoinTest, AnHttpsPeerIsJoinedWhenItsCertificateIsTrustedAndRefusedOtherwise) {
  // A certificate for 127.0.0.1 made by the openssl command, as tls_test does.
  const std::string cert = dir_.Join("cert.pem");
  const std::string key = dir_.Join("key.pem");
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  // Trains go through a plain daemon; the peer serves HTTPS only and applies them too.
  DaemonProcess plain = Start(Args(dir_.Join("p"), "p"));
  std::vector<std::string> tls_args = Args(dir_.Join("a"), "a");
  tls_args.insert(tls_args.end(), {"--tls-cert-file", cert, "--tls-key-file", key});
  DaemonProcess a = Start(tls_args);
  Train(plain.port(), 0, 60);
  const std::string peer = "https://127.0.0.1:" + std::to_string(a.port());

  std::vector<std::string> b_args = Args(dir_.Join("b"), "b", peer);
  b_args.insert(b_args.end(), {"--cluster-join-ca-file", cert});
  DaemonProcess b = Start(b_args);
  ASSERT_TRUE(WaitApplied(b.port())) << b.Log();
  EXPECT_NE(b.Log().find("cluster join: joined from " + peer), std::string::npos) << b.Log();
  ExpectSameModel(Observe(plain.port(), JoinProbes()), Observe(b.port(), JoinProbes()),
                  "b joined over HTTPS");

  // The system's CAs do not trust the test's certificate: no model, and the cause named.
  const ProcessExit untrusted =
      RunToExit(Args(dir_.Join("c"), "c", peer), std::chrono::seconds(60));
  EXPECT_EQ(untrusted.status, 1) << untrusted.output;
  EXPECT_NE(untrusted.output.find(peer + ": the TLS handshake failed"), std::string::npos)
      << untrusted.output;
  EXPECT_TRUE(NoModelIn(dir_.Join("c")));
}

// While serving, a daemon that finds the stream trimmed past its model stops with exit status 3
// (the unit's Restart=on-failure starts it again), and started again it joins from a peer. To get
// there: b is frozen (SIGSTOP) while a learns on and the stream is trimmed past b's position, and
// Redis is restarted, so that b's connections break and it checks the stream again as it
// reconnects, after SIGCONT.
TEST_F(ClusterJoinTest, ADaemonFindingItselfBehindWhileServingStopsAndRejoinsAtItsNextStart) {
  DaemonProcess a = Start(Args(dir_.Join("a"), "a"));
  const std::string peer = "http://127.0.0.1:" + std::to_string(a.port());
  std::optional<DaemonProcess> b = Start(Args(dir_.Join("b"), "b", peer));
  Train(a.port(), 0, 40);
  ASSERT_TRUE(WaitApplied(b->port()));
  ASSERT_EQ(::kill(b->pid(), SIGSTOP), 0);
  Train(a.port(), 40, 80);
  std::string before_last;
  {
    replication::RedisClient redis("127.0.0.1", redis_->port());
    auto ids = redis.Command({"XREVRANGE", kStream, "+", "-", "COUNT", "2"});
    ASSERT_TRUE(ids && ids->elements.size() == 2);
    const std::string last = ids->elements[0].elements[0].text;
    before_last = ids->elements[1].elements[0].text;
    ASSERT_TRUE(redis.Command({"XTRIM", kStream, "MINID", last}).has_value());
    ASSERT_TRUE(redis.Command({"SET", std::string(kStream) + ":trimmed", before_last}).has_value());
  }
  const unsigned short redis_port = redis_->port();
  redis_->Stop();
  redis_.reset();
  auto restarted = RedisProcess::Start(dir_.path().string(), redis_port);
  ASSERT_TRUE(restarted.has_value()) << restarted.error();
  redis_.emplace(std::move(*restarted));
  ASSERT_EQ(::kill(b->pid(), SIGCONT), 0);

  EXPECT_EQ(b->Wait(std::chrono::seconds(60)), 3) << b->Log();
  EXPECT_NE(b->Log().find("was trimmed through " + before_last), std::string::npos) << b->Log();
  EXPECT_NE(b->Log().find("rejoins the cluster from a peer's checkpoint at its next start"),
            std::string::npos)
      << b->Log();
  b.reset();

  b.emplace(Start(Args(dir_.Join("b"), "b", peer)));
  ASSERT_TRUE(WaitApplied(b->port())) << b->Log();
  EXPECT_NE(b->Log().find("cluster join: joined from " + peer), std::string::npos) << b->Log();
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(b->port(), JoinProbes()),
                  "b rejoined after stopping");
}

TEST_F(ClusterJoinTest, ADaemonBehindTheTrimmedStreamJoinsFromACheckpointAndKeepsItsOldFolder) {
  DaemonProcess a = Start(Args(dir_.Join("a"), "a"));
  const std::string peer = "http://127.0.0.1:" + std::to_string(a.port());
  std::optional<DaemonProcess> b = Start(Args(dir_.Join("b"), "b", peer));
  Train(a.port(), 0, 40);
  ASSERT_TRUE(WaitApplied(b->port()));
  ASSERT_EQ(b->Terminate(), 0);
  b.reset();
  Train(a.port(), 40, 80);

  // What trimming leaves when b was away past the retention: only the last entry, and the
  // largest id deleted recorded in "<stream>:trimmed".
  replication::RedisClient redis("127.0.0.1", redis_->port());
  auto ids = redis.Command({"XREVRANGE", kStream, "+", "-", "COUNT", "2"});
  ASSERT_TRUE(ids && ids->elements.size() == 2);
  const std::string last = ids->elements[0].elements[0].text;
  const std::string before_last = ids->elements[1].elements[0].text;
  ASSERT_TRUE(redis.Command({"XTRIM", kStream, "MINID", last}).has_value());
  ASSERT_TRUE(redis.Command({"SET", std::string(kStream) + ":trimmed", before_last}).has_value());

  b.emplace(Start(Args(dir_.Join("b"), "b", peer)));
  ASSERT_TRUE(WaitApplied(b->port())) << b->Log();
  EXPECT_NE(b->Log().find("was trimmed through " + before_last), std::string::npos) << b->Log();
  EXPECT_NE(b->Log().find("cluster join: joined from " + peer), std::string::npos) << b->Log();
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(b->port(), JoinProbes()),
                  "b joined past the trimmed part");
  // The old model is kept aside, where the log says.
  std::vector<fs::path> aside;
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    if (entry.path().filename().string().starts_with("b.before-join-")) aside.push_back(entry);
  }
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_TRUE(fs::exists(aside[0] / "CURRENT"));
  EXPECT_NE(b->Log().find("is now " + aside[0].string()), std::string::npos) << b->Log();

  Train(b->port(), 80, 90);
  ASSERT_TRUE(WaitApplied(a.port()) && WaitApplied(b->port()));
  ExpectSameModel(Observe(a.port(), JoinProbes()), Observe(b->port(), JoinProbes()),
                  "b following the stream after joining");
}

}  // namespace
}  // namespace nbspamd::testing
