// RedisClient: one synchronous connection to Redis through hiredis, with timeouts, and the small
// part of the protocol nbspamd's cluster mode needs: a command as a list of binary-safe strings,
// and its reply as a plain value tree.
//
//   RedisClient redis("127.0.0.1", 6379);
//   auto reply = redis.Command({"XADD", "nbspamd:training", "*", "e", bytes});
//   if (!reply) ...  // kUnavailable: not connected, or the connection broke (it reconnects next)
//
// Not thread-safe: one thread at a time (callers guard it with a mutex or own it).
#ifndef NBSPAMD_REPLICATION_REDIS_CLIENT_H_
#define NBSPAMD_REPLICATION_REDIS_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
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

class RedisClient {
 public:
  // Connects lazily, at the first command.
  RedisClient(std::string host, std::uint16_t port,
              std::chrono::milliseconds timeout = std::chrono::seconds(5));
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;
  ~RedisClient();

  // Sends `args` and reads the reply, connecting first when needed. A reply that is a Redis
  // error is kFailedPrecondition with its text; a connection that cannot be made or breaks is
  // kUnavailable (the connection is dropped and the next call connects again).
  [[nodiscard]] std::expected<RedisReply, Error> Command(const std::vector<std::string>& args);

  // The timeout of reads and writes from now on (a blocking XREAD needs more than its block time).
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  [[nodiscard]] bool connected() const { return context_ != nullptr; }
  void Disconnect();

 private:
  [[nodiscard]] std::expected<void, Error> Connect();

  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds applied_timeout_{0};
  redisContext* context_ = nullptr;
};

}  // namespace nbspamd::replication

#endif  // NBSPAMD_REPLICATION_REDIS_CLIENT_H_
