#include "bench/perf/load_client/daemon_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <string_view>
#include <utility>

extern char** environ;

namespace nbspamd::bench {
namespace {

int ExitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::expected<LaunchedDaemon, std::string> LaunchedDaemon::Start(
    const std::string& binary, const std::vector<std::string>& args, const std::string& log_path) {
  int out[2];
  if (pipe(out) != 0) return std::unexpected(std::string("pipe failed"));
  std::vector<std::string> argv_strings = {binary, "--listen", "127.0.0.1:0"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log = log_path.empty() ? "/dev/null" : log_path;

  const pid_t pid = fork();
  if (pid < 0) return std::unexpected(std::string("fork failed"));
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    // Settings come from the arguments alone; the daemon also refuses unknown NBSPAMD_*
    // variables such as the benchmarks' NBSPAMD_BENCH_CORPUS.
    std::vector<std::string> names;
    for (char** variable = environ; *variable != nullptr; ++variable) {
      const std::string_view entry(*variable);
      if (entry.starts_with("NBSPAMD_")) names.emplace_back(entry.substr(0, entry.find('=')));
    }
    for (const std::string& name : names) unsetenv(name.c_str());
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  LaunchedDaemon daemon(pid, 0);

  // Read standard output until the "listening on HOST:PORT" line.
  std::string printed;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    const std::size_t line_end = printed.find('\n');
    if (line_end != std::string::npos) {
      const std::string line = printed.substr(0, line_end);
      const std::size_t colon = line.rfind(':');
      if (line.starts_with("listening on ") && colon != std::string::npos) {
        unsigned port = 0;
        const char* first = line.data() + colon + 1;
        const char* last = line.data() + line.size();
        const auto [end, error] = std::from_chars(first, last, port);
        if (error == std::errc() && end == last && port > 0 && port < 65536) {
          daemon.port_ = static_cast<std::uint16_t>(port);
          close(out[0]);
          return daemon;
        }
      }
      printed.erase(0, line_end + 1);
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd readable{out[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) <= 0) break;
    char chunk[256];
    const ssize_t n = read(out[0], chunk, sizeof chunk);
    if (n <= 0) break;  // It exited.
    printed.append(chunk, static_cast<std::size_t>(n));
  }
  close(out[0]);
  return std::unexpected(binary + " did not start (see its log: " + log + ")");
}

LaunchedDaemon::LaunchedDaemon(LaunchedDaemon&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), port_(other.port_) {}

LaunchedDaemon::~LaunchedDaemon() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

int LaunchedDaemon::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return ExitStatus(status);
}

}  // namespace nbspamd::bench
