// LaunchedDaemon: an nbspamd binary started for a benchmark on 127.0.0.1 with an ephemeral port,
// stopped with SIGTERM when the benchmark is done with it (SIGKILL if it is dropped running).
//
//   auto daemon = LaunchedDaemon::Start("build/release/server/nbspamd", {"--data-dir", dir});
//   RunLoad({.port = daemon->port(), ...}, make_request);
//   daemon->Stop();
#ifndef NBSPAMD_BENCH_PERF_LOAD_CLIENT_DAEMON_LAUNCHER_H_
#define NBSPAMD_BENCH_PERF_LOAD_CLIENT_DAEMON_LAUNCHER_H_

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace nbspamd::bench {

class LaunchedDaemon {
 public:
  // Runs `binary --listen 127.0.0.1:0 ARGS...` and waits (at most 60 s) for it to print
  // "listening on HOST:PORT". Its standard error goes to `log_path` ("" discards it). Its
  // environment is this process's without the NBSPAMD_* variables: the arguments alone set it up.
  // Errors: the binary could not start, exited, or never said where it listens.
  [[nodiscard]] static std::expected<LaunchedDaemon, std::string> Start(
      const std::string& binary, const std::vector<std::string>& args,
      const std::string& log_path = "");

  LaunchedDaemon(LaunchedDaemon&& other) noexcept;
  LaunchedDaemon& operator=(LaunchedDaemon&&) = delete;
  LaunchedDaemon(const LaunchedDaemon&) = delete;
  ~LaunchedDaemon();  // SIGKILL if it still runs.

  [[nodiscard]] std::uint16_t port() const { return port_; }

  // SIGTERM, then waits for the exit. Returns the exit status, or 128 + signal.
  int Stop();

 private:
  LaunchedDaemon(pid_t pid, std::uint16_t port) : pid_(pid), port_(port) {}

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_PERF_LOAD_CLIENT_DAEMON_LAUNCHER_H_
