// RedisClient: one synchronous connection to Redis through hiredis, with timeouts, and the small
// part of the protocol nbspamd's cluster mode needs: a command as a list of binary-safe strings,
// and its reply as a plain value tree.
//
//   RedisClient redis("127.0.0.1", 6379);
//   auto reply = redis.Command({"XADD", "nbspamd:training", "*", "e", bytes});
//   if (!reply) ...  // kUnavailable: not connected, or the connection broke (it reconnects next)
//
// With Sentinel (RedisTarget::sentinels), each connection is made to the primary the sentinels
// name (SENTINEL get-master-addr-by-name, asking each in turn), which must say it is the master
// (ROLE); a READONLY error drops the connection, so the next command asks the sentinels again:
// a failover is followed without a restart.
//
// With RedisTarget::replica, a connection is made to one of the primary's replicas instead (the
// primary, found as above, lists them: ROLE), chosen by `replica_key` so that daemons spread over
// them, and kept only while that replica says it is connected to its primary; when the primary
// has no such replica the connection is to the primary itself (reading_replica() false), and
// CheckRole moves it to a replica once one is there again. For reads only (a replica refuses
// writes).
//
// Not thread-safe: one thread at a time (callers guard it with a mutex or own it).
#ifndef NBSPAMD_REPLICATION_REDIS_CLIENT_H_
#define NBSPAMD_REPLICATION_REDIS_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

struct redisContext;

namespace nbspamd::replication {

// A reply: a string (simple or bulk, also a status), an integer, nil, or an array.
struct RedisReply {
  enum class Type { kString, kInteger, kNil, kArray };
  Type type = Type::kNil;
  std::string text;
  long long integer = 0;
  std::vector<RedisReply> elements;
};

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

// Where a RedisClient connects: one Redis server, or the primary a set of Sentinels names.
struct RedisTarget {
  std::string host = "127.0.0.1";  // Without sentinels: the server.
  std::uint16_t port = 6379;
  std::vector<HostPort> sentinels;      // Not empty: ask them for the primary (host/port unused).
  std::string master_name = "nbspamd";  // The name the sentinels monitor the primary under.
  std::string password;                 // AUTH to Redis when not empty. Never logged.
  std::string sentinel_password;        // AUTH to each sentinel when not empty. Never logged.
  // Connect to a replica of the primary rather than to the primary (for reading; see above).
  bool replica = false;
  std::string replica_key;  // Chooses among the replicas (e.g. the daemon's name).
};

// Parses "HOST:PORT,HOST:PORT,..." (spaces around items allowed); nullopt when an item is not
// HOST:PORT with a port from 1 to 65535, or there is none.
[[nodiscard]] std::optional<std::vector<HostPort>> ParseHostPortList(std::string_view text);

// Asks `target.sentinels` in turn for the address of the primary `target.master_name`; the first
// answer wins. Errors: kUnavailable when none answers with an address (each one's error is in
// the message).
[[nodiscard]] std::expected<HostPort, Error> AskSentinels(const RedisTarget& target,
                                                          std::chrono::milliseconds timeout);

class RedisClient {
 public:
  // Connects lazily, at the first command.
  RedisClient(std::string host, std::uint16_t port,
              std::chrono::milliseconds timeout = std::chrono::seconds(5));
  explicit RedisClient(RedisTarget target,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5));
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;
  ~RedisClient();

  // Sends `args` and reads the reply, connecting first when needed. A reply that is a Redis
  // error is kFailedPrecondition with its text, except READONLY (a primary demoted to replica)
  // and the errors of a server not ready to serve (LOADING after a restart, MASTERDOWN, BUSY,
  // TRYAGAIN), which are kUnavailable and drop the connection; a connection that cannot be made or
  // breaks, or (with sentinels) a server that is not the master, is kUnavailable (the connection is
  // dropped and the next call connects again, asking the sentinels again).
  [[nodiscard]] std::expected<RedisReply, Error> Command(const std::vector<std::string>& args);

  // The timeout of reads and writes from now on (a blocking XREAD needs more than its block time).
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  [[nodiscard]] bool connected() const { return context_ != nullptr; }
  void Disconnect();
  // "HOST:PORT" of the server connected to last ("" before any).
  [[nodiscard]] const std::string& address() const { return address_; }
  // Checks that the server connected to still plays its part (ROLE), and drops the connection
  // when it does not: with sentinels, the primary must still be the master; with `replica`, the
  // replica must still be a replica connected to its primary, and a connection that fell back to
  // the primary moves to a connected replica once the primary lists one again (keeping the
  // primary's when none answers: success either way). kUnavailable when a part is no longer
  // played, or when the connection breaks. Without either, or when not connected: nothing to
  // check.
  [[nodiscard]] std::expected<void, Error> CheckRole();
  // With `replica`: whether the connection is to a replica (false: to the primary, for want of
  // one). Meaningful while connected.
  [[nodiscard]] bool reading_replica() const { return reading_replica_; }

 private:
  [[nodiscard]] std::expected<void, Error> Connect();
  // Connects to `server` and authenticates: context_ and address_ set.
  [[nodiscard]] std::expected<void, Error> ConnectTo(const HostPort& server);
  // Connected to the primary, whose replicas are `replicas`: moves the connection to the first
  // of them, from replica_key's choice on, that answers as a replica connected to its primary;
  // else stays on the primary.
  void MoveToReplica(const std::vector<HostPort>& replicas);
  [[nodiscard]] std::expected<RedisReply, Error> Send(const std::vector<std::string>& args);

  RedisTarget target_;
  std::string address_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds applied_timeout_{0};
  redisContext* context_ = nullptr;
  bool reading_replica_ = false;
};

}  // namespace nbspamd::replication

#endif  // NBSPAMD_REPLICATION_REDIS_CLIENT_H_
