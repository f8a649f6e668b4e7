#include "tests/support/redis_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace nbspamd::testing {
namespace {

namespace net = boost::asio;
using net::ip::tcp;

bool AnswersPing(unsigned short port) {
  try {
    net::io_context context;
    tcp::socket socket(context);
    socket.connect({net::ip::make_address("127.0.0.1"), port});
    net::write(socket, net::buffer(std::string("PING\r\n")));
    char reply[7] = {};
    net::read(socket, net::buffer(reply, 7));
    // A server with a password answers, but refuses PING before AUTH.
    return std::string(reply, 7) == "+PONG\r\n" || std::string(reply, 7) == "-NOAUTH";
  } catch (const std::exception&) {
    return false;
  }
}

void StopProcess(pid_t pid, int signal_number) {
  if (pid <= 0) return;
  kill(pid, signal_number);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
}

}  // namespace

unsigned short FreeLoopbackPort() {
  net::io_context context;
  tcp::acceptor acceptor(context, {net::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

RefusingLoopbackPort::RefusingLoopbackPort()
    : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "bind 127.0.0.1:0");
  }
  port_ = ntohs(address.sin_port);
}

RefusingLoopbackPort::~RefusingLoopbackPort() { ::close(fd_); }

std::string RefusingLoopbackPort::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::expected<RedisProcess, std::string> RedisProcess::Start(const std::string& dir,
                                                             unsigned short port) {
  return StartReplica(dir, port, 0);
}

std::expected<RedisProcess, std::string> RedisProcess::StartReplica(
    const std::string& dir, unsigned short port, unsigned short primary_port,
    const std::vector<std::string>& extra) {
  const std::string log = dir + "/redis.log";
  std::vector<std::string> args = {"redis-server",
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(port),
                                   "--dir",
                                   dir,
                                   "--appendonly",
                                   "yes",
                                   "--appendfsync",
                                   "always",
                                   "--save",
                                   "",
                                   "--logfile",
                                   log,
                                   "--daemonize",
                                   "no",
                                   "--repl-diskless-sync-delay",
                                   "0"};
  if (primary_port != 0) {
    args.insert(args.end(), {"--replicaof", "127.0.0.1", std::to_string(primary_port)});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return Spawn(std::move(args), log, port);
}

std::expected<RedisProcess, std::string> RedisProcess::StartSentinel(
    const std::string& dir, unsigned short port, unsigned short primary_port,
    const std::string& master_name, int quorum, int down_after_ms, int failover_timeout_ms,
    const std::vector<std::string>& extra_conf) {
  const std::string conf = dir + "/sentinel-" + std::to_string(port) + ".conf";
  const std::string log = dir + "/sentinel-" + std::to_string(port) + ".log";
  {
    // Sentinel rewrites this file as it learns (replicas, other sentinels, epochs).
    std::ofstream out(conf);
    out << "bind 127.0.0.1\n"
        << "port " << port << "\n"
        << "dir " << dir << "\n"
        << "logfile " << log << "\n"
        << "daemonize no\n"
        << "sentinel monitor " << master_name << " 127.0.0.1 " << primary_port << " " << quorum
        << "\n"
        << "sentinel down-after-milliseconds " << master_name << " " << down_after_ms << "\n"
        << "sentinel failover-timeout " << master_name << " " << failover_timeout_ms << "\n"
        << "sentinel parallel-syncs " << master_name << " 2\n";
    for (const std::string& line : extra_conf) out << line << "\n";
    if (!out) return std::unexpected("cannot write " + conf);
  }
  return Spawn({"redis-server", conf, "--sentinel"}, log, port);
}

std::expected<RedisProcess, std::string> RedisProcess::Spawn(std::vector<std::string> args,
                                                             const std::string& log,
                                                             unsigned short port) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execvp("redis-server", argv.data());
    _exit(127);
  }
  if (pid < 0) return std::unexpected("fork failed");
  RedisProcess redis(pid, port);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (AnswersPing(port)) return redis;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      redis.pid_ = -1;
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      return std::unexpected("redis-server exited: " + text.str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::unexpected("redis-server did not answer PING within 10 s");
}

RedisProcess::RedisProcess(RedisProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), port_(other.port_) {}

RedisProcess& RedisProcess::operator=(RedisProcess&& other) noexcept {
  if (this != &other) {
    StopProcess(pid_, SIGKILL);
    pid_ = std::exchange(other.pid_, -1);
    port_ = other.port_;
  }
  return *this;
}

RedisProcess::~RedisProcess() { StopProcess(pid_, SIGKILL); }

void RedisProcess::Stop() {
  StopProcess(pid_, SIGTERM);
  pid_ = -1;
}

void RedisProcess::Kill() {
  StopProcess(pid_, SIGKILL);
  pid_ = -1;
}

}  // namespace nbspamd::testing
