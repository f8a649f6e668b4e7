// DaemonProcess: the real nbspamd binary, started for a test on 127.0.0.1 with an ephemeral
// port and its own data folder, and stopped (SIGTERM or SIGKILL) when the test says so or ends.
#ifndef NBSPAMD_TESTS_SUPPORT_DAEMON_PROCESS_H_
#define NBSPAMD_TESTS_SUPPORT_DAEMON_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::testing {

// The path of the nbspamd binary under test (compiled in by CMake).
[[nodiscard]] std::string DaemonBinary();

// How a process ended: its exit status (or 128 + signal) and what it printed.
struct ProcessExit {
  int status = -1;
  std::string output;  // Standard output and standard error together.
};

// Runs nbspamd with `args` until it exits (at most `timeout`, then it is killed).
[[nodiscard]] ProcessExit RunToExit(const std::vector<std::string>& args,
                                    std::chrono::seconds timeout = std::chrono::seconds(30));

class DaemonProcess {
 public:
  // Starts nbspamd with `args` and waits until it prints "listening on HOST:PORT". Fails with
  // the daemon's output when it exits first or takes longer than 30 s.
  [[nodiscard]] static std::expected<DaemonProcess, std::string> Start(
      const std::vector<std::string>& args);

  DaemonProcess(DaemonProcess&& other) noexcept;
  DaemonProcess& operator=(DaemonProcess&&) = delete;
  DaemonProcess(const DaemonProcess&) = delete;
  ~DaemonProcess();  // Kills the daemon if it still runs.

  [[nodiscard]] unsigned short port() const { return port_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

  // Sends SIGTERM and waits for the exit (at most `timeout`, then SIGKILL). Returns the exit
  // status, or 128 + signal.
  int Terminate(std::chrono::seconds timeout = std::chrono::seconds(30));
  // Waits for the daemon to exit by itself (at most `timeout`, then SIGKILL). Returns the exit
  // status, or 128 + signal.
  int Wait(std::chrono::seconds timeout = std::chrono::seconds(30));
  // Sends SIGKILL and reaps the process.
  void Kill();
  // Everything the daemon printed to standard error so far.
  [[nodiscard]] std::string Log() const;
  // The port in the first log line holding `marker` followed by digits ("spamd listening on
  // 127.0.0.1:" gives the spamd listener's port), waiting up to 5 s for it; nullopt when it
  // does not come.
  [[nodiscard]] std::optional<unsigned short> LoggedPort(std::string_view marker) const;

 private:
  DaemonProcess(pid_t pid, unsigned short port, std::string log_path);

  pid_t pid_ = -1;
  unsigned short port_ = 0;
  std::string log_path_;
};

// The daemon most integration tests run: nbspamd on 127.0.0.1 and an ephemeral port, its model in
// `data_dir`, 2 threads, then `extra` flags. Throws std::runtime_error with the daemon's output
// when it does not start (a failure of the test's set-up).
[[nodiscard]] DaemonProcess StartTestDaemon(const std::string& data_dir,
                                            const std::vector<std::string>& extra = {});

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_DAEMON_PROCESS_H_
