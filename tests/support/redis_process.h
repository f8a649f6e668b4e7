// RedisProcess: a real redis-server (Debian's) for a test, on 127.0.0.1 and a free port, with its
// data in a folder of the test's, the append-only file synced at every write (so the stream
// survives a restart, even a SIGKILL, with everything Redis acknowledged) and no snapshots.
#ifndef NBSPAMD_TESTS_SUPPORT_REDIS_PROCESS_H_
#define NBSPAMD_TESTS_SUPPORT_REDIS_PROCESS_H_

#include <sys/types.h>

#include <expected>
#include <string>

namespace nbspamd::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
[[nodiscard]] unsigned short FreeLoopbackPort();

class RedisProcess {
 public:
  // Starts redis-server on `port` with its files in `dir`, and waits (at most 10 s) until it
  // answers PING. Fails with its log.
  [[nodiscard]] static std::expected<RedisProcess, std::string> Start(const std::string& dir,
                                                                      unsigned short port);
  RedisProcess(RedisProcess&& other) noexcept;
  RedisProcess& operator=(RedisProcess&& other) noexcept;
  RedisProcess(const RedisProcess&) = delete;
  ~RedisProcess();  // Kills it if it still runs.

  [[nodiscard]] unsigned short port() const { return port_; }
  // SIGTERM (Redis flushes its append-only file and exits) and wait, at most 10 s.
  void Stop();

 private:
  RedisProcess(pid_t pid, unsigned short port) : pid_(pid), port_(port) {}
  pid_t pid_ = -1;
  unsigned short port_ = 0;
};

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_REDIS_PROCESS_H_
