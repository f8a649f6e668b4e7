#include "tests/support/daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <thread>

namespace nbspamd::testing {
namespace {

// Starts the binary with stdout on a pipe and stderr on `stderr_fd` (or the same pipe).
pid_t Spawn(const std::vector<std::string>& args, int stdout_fd, int stderr_fd) {
  std::vector<char*> argv;
  std::string binary = DaemonBinary();
  argv.push_back(binary.data());
  std::vector<std::string> copies = args;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(stdout_fd, STDOUT_FILENO);
    dup2(stderr_fd, STDERR_FILENO);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Waits for `pid` at most `timeout`; kills it after that. Returns the decoded status.
int WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return DecodeStatus(status);
    if (done < 0) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return DecodeStatus(status);
}

std::string ReadAll(int fd) {
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) output.append(buffer, n);
  return output;
}

}  // namespace

std::string DaemonBinary() { return NBSPAMD_BINARY; }

ProcessExit RunToExit(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  char path[] = "/tmp/nbspamd-output-XXXXXX";
  const int fd = mkstemp(path);
  unlink(path);
  const pid_t pid = Spawn(args, fd, fd);
  ProcessExit exit;
  exit.status = WaitFor(pid, timeout);
  lseek(fd, 0, SEEK_SET);
  exit.output = ReadAll(fd);
  close(fd);
  return exit;
}

DaemonProcess::DaemonProcess(pid_t pid, unsigned short port, std::string log_path)
    : pid_(pid), port_(port), log_path_(std::move(log_path)) {}

DaemonProcess::DaemonProcess(DaemonProcess&& other) noexcept
    : pid_(other.pid_), port_(other.port_), log_path_(std::move(other.log_path_)) {
  other.pid_ = -1;
  other.log_path_.clear();
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Kill();
  if (!log_path_.empty()) unlink(log_path_.c_str());
}

std::expected<DaemonProcess, std::string> DaemonProcess::Start(
    const std::vector<std::string>& args) {
  char log_path[] = "/tmp/nbspamd-log-XXXXXX";
  const int log_fd = mkstemp(log_path);
  int pipe_fds[2];
  if (log_fd < 0 || pipe(pipe_fds) != 0) return std::unexpected("cannot create pipes");
  const pid_t pid = Spawn(args, pipe_fds[1], log_fd);
  close(pipe_fds[1]);
  close(log_fd);

  // Read standard output until the "listening on" line.
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (output.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd poll_fd{pipe_fds[0], POLLIN, 0};
    if (poll(&poll_fd, 1, 100) <= 0) continue;
    char buffer[256];
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // The daemon exited.
    output.append(buffer, n);
  }
  close(pipe_fds[0]);  // The daemon prints nothing else to standard output.
  DaemonProcess daemon(pid, 0, log_path);
  const std::string prefix = "listening on ";
  const std::size_t colon = output.rfind(':');
  if (!output.starts_with(prefix) || colon == std::string::npos) {
    daemon.Kill();
    return std::unexpected("daemon did not start: " + output + daemon.Log());
  }
  daemon.port_ = static_cast<unsigned short>(std::stoi(output.substr(colon + 1)));
  return daemon;
}

int DaemonProcess::Terminate(std::chrono::seconds timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const int status = WaitFor(pid_, timeout);
  pid_ = -1;
  return status;
}

int DaemonProcess::Wait(std::chrono::seconds timeout) {
  if (pid_ <= 0) return -1;
  const int status = WaitFor(pid_, timeout);
  pid_ = -1;
  return status;
}

void DaemonProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string DaemonProcess::Log() const {
  std::ifstream file(log_path_);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::optional<unsigned short> DaemonProcess::LoggedPort(std::string_view marker) const {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string log = Log();
    const std::size_t at = log.find(marker);
    if (at != std::string::npos) {
      const std::size_t digits = at + marker.size();
      unsigned port = 0;
      const auto [end, error] =
          std::from_chars(log.data() + digits, log.data() + log.size(), port, 10);
      if (error == std::errc() && end != log.data() + digits && port > 0 && port <= 65535) {
        return static_cast<unsigned short>(port);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

DaemonProcess StartTestDaemon(const std::string& data_dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--data-dir",
                                   data_dir,   "--threads",   "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto daemon = DaemonProcess::Start(args);
  if (!daemon) throw std::runtime_error(daemon.error());
  return std::move(*daemon);
}

}  // namespace nbspamd::testing
