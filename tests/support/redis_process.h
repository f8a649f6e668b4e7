// RedisProcess: a real redis-server (Debian's) for a test, on 127.0.0.1 and a free port, with its
// data in a folder of the test's, the append-only file synced at every write (so the stream
// survives a restart, even a SIGKILL, with everything Redis acknowledged), no snapshots, and a
// replica's full sync started at once (repl-diskless-sync-delay 0).
// A replica is one started with `replica_of` (--replicaof); a Sentinel is the same binary in
// Sentinel mode (SentinelProcess) with its configuration file written into the test's folder.
// Not thread-safe; each object owns its process and kills it when destroyed.
#ifndef NBSPAMD_TESTS_SUPPORT_REDIS_PROCESS_H_
#define NBSPAMD_TESTS_SUPPORT_REDIS_PROCESS_H_

#include <sys/types.h>

#include <expected>
#include <string>
#include <vector>

namespace nbspamd::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released). Another
// process (a daemon of a test running beside) may take it before it is used: for a server the
// test starts there, which then fails loudly, not for a peer that must not answer.
[[nodiscard]] unsigned short FreeLoopbackPort();

// A TCP port on 127.0.0.1 that nobody answers while this object lives: bound (without
// SO_REUSEADDR, so no other socket can take it) but not listening, so that a connection to it is
// refused at once. For a peer that must not answer. Throws std::system_error when no port can be
// bound. Not thread-safe.
class RefusingLoopbackPort {
 public:
  RefusingLoopbackPort();
  RefusingLoopbackPort(const RefusingLoopbackPort&) = delete;
  RefusingLoopbackPort& operator=(const RefusingLoopbackPort&) = delete;
  ~RefusingLoopbackPort();

  [[nodiscard]] unsigned short port() const { return port_; }
  // "http://127.0.0.1:PORT".
  [[nodiscard]] std::string url() const;

 private:
  int fd_ = -1;
  unsigned short port_ = 0;
};

class RedisProcess {
 public:
  // Starts redis-server on `port` with its files in `dir`, and waits (at most 10 s) until it
  // answers PING. Fails with its log.
  [[nodiscard]] static std::expected<RedisProcess, std::string> Start(const std::string& dir,
                                                                      unsigned short port);
  // A replica of the Redis on 127.0.0.1:`primary_port` (it need not have synced yet); 0: a
  // primary, as Start. `extra` is added to its command line (e.g. "--requirepass", "...").
  [[nodiscard]] static std::expected<RedisProcess, std::string> StartReplica(
      const std::string& dir, unsigned short port, unsigned short primary_port,
      const std::vector<std::string>& extra = {});
  // Redis Sentinel (redis-server CONF --sentinel) on `port`, watching the primary on
  // 127.0.0.1:`primary_port` as `master_name` with `quorum`, declaring it down after
  // `down_after_ms` without an answer; its configuration and log go into `dir`. `extra_conf`:
  // more lines of its configuration (e.g. "requirepass ...", "sentinel auth-pass NAME ...").
  [[nodiscard]] static std::expected<RedisProcess, std::string> StartSentinel(
      const std::string& dir, unsigned short port, unsigned short primary_port,
      const std::string& master_name, int quorum, int down_after_ms, int failover_timeout_ms,
      const std::vector<std::string>& extra_conf = {});
  RedisProcess(RedisProcess&& other) noexcept;
  RedisProcess& operator=(RedisProcess&& other) noexcept;
  RedisProcess(const RedisProcess&) = delete;
  ~RedisProcess();  // Kills it if it still runs.

  [[nodiscard]] unsigned short port() const { return port_; }
  // SIGTERM (Redis flushes its append-only file and exits) and wait, at most 10 s.
  void Stop();
  // SIGKILL, without waiting for anything to be flushed.
  void Kill();

 private:
  static std::expected<RedisProcess, std::string> Spawn(std::vector<std::string> args,
                                                        const std::string& log,
                                                        unsigned short port);
  RedisProcess(pid_t pid, unsigned short port) : pid_(pid), port_(port) {}
  pid_t pid_ = -1;
  unsigned short port_ = 0;
};

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_REDIS_PROCESS_H_
