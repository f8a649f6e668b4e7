#include "replication/redis_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace nbspamd::replication {
namespace {

// A server on 127.0.0.1 that answers every command it reads with the same RESP reply: a Redis
// in one state, at the protocol seam. Serves one connection at a time until destroyed.
class OneReplyServer {
 public:
  explicit OneReplyServer(std::string reply) : reply_(std::move(reply)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(listener_, 4) != 0) {
      return;
    }
    socklen_t length = sizeof(address);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneReplyServer() {
    stopping_ = true;
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    if (thread_.joinable()) thread_.join();
  }

  std::uint16_t port() const { return port_; }
  int commands() const { return commands_; }

 private:
  void Serve() {
    while (!stopping_) {
      const int connection = accept(listener_, nullptr, nullptr);
      if (connection < 0) return;
      char buffer[4096];
      // hiredis writes each command whole: one read, one reply.
      while (recv(connection, buffer, sizeof(buffer), 0) > 0) {
        ++commands_;
        if (send(connection, reply_.data(), reply_.size(), MSG_NOSIGNAL) < 0) break;
      }
      close(connection);
    }
  }

  std::string reply_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_ = false;
  std::atomic<int> commands_ = 0;
  std::thread thread_;
};

// A Redis restarted a moment ago answers LOADING until its data set is read: the stream is not
// gone nor trimmed, it is not there yet. kUnavailable, which callers retry, not an answer about
// the command (which would make a daemon take the stream for trimmed past its model for good).
TEST(RedisClientTest, ARedisStillLoadingItsDataIsUnavailable) {
  OneReplyServer server("-LOADING Redis is loading the dataset in memory\r\n");
  ASSERT_NE(server.port(), 0);
  RedisClient redis("127.0.0.1", server.port(), std::chrono::seconds(2));
  const auto reply = redis.Command({"XREVRANGE", "nbspamd:training", "+", "-", "COUNT", "1"});
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(reply.error().code, ErrorCode::kUnavailable) << reply.error().message;
  EXPECT_NE(reply.error().message.find("LOADING"), std::string::npos) << reply.error().message;
  EXPECT_FALSE(redis.connected());  // The next command connects afresh.
  EXPECT_EQ(server.commands(), 1);
}

TEST(RedisClientTest, TheOtherNotReadyAnswersAreUnavailableToo) {
  for (const char* reply_text :
       {"-MASTERDOWN Link with MASTER is down\r\n", "-BUSY Redis is busy running a script\r\n",
        "-TRYAGAIN Multiple keys request during rehashing\r\n"}) {
    OneReplyServer server(reply_text);
    ASSERT_NE(server.port(), 0);
    RedisClient redis("127.0.0.1", server.port(), std::chrono::seconds(2));
    const auto reply = redis.Command({"XADD", "nbspamd:training", "*", "e", "x"});
    ASSERT_FALSE(reply.has_value());
    EXPECT_EQ(reply.error().code, ErrorCode::kUnavailable) << reply.error().message;
  }
}

// Errors about the command itself stay kFailedPrecondition, with Redis's text, and keep the
// connection; so does a code that only starts like a not-ready one.
TEST(RedisClientTest, ACommandsOwnErrorIsAFailedPrecondition) {
  for (const char* reply_text : {"-ERR wrong number of arguments for 'xadd' command\r\n",
                                 "-WRONGTYPE Operation against a key holding the wrong kind\r\n",
                                 "-LOADINGX not a code Redis sends\r\n"}) {
    OneReplyServer server(reply_text);
    ASSERT_NE(server.port(), 0);
    RedisClient redis("127.0.0.1", server.port(), std::chrono::seconds(2));
    const auto reply = redis.Command({"XADD", "nbspamd:training"});
    ASSERT_FALSE(reply.has_value());
    EXPECT_EQ(reply.error().code, ErrorCode::kFailedPrecondition) << reply.error().message;
    EXPECT_TRUE(redis.connected());
  }
}

}  // namespace
}  // namespace nbspamd::replication
