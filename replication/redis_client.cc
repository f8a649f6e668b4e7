#include "replication/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <utility>

namespace nbspamd::replication {
namespace {

timeval ToTimeval(std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  return tv;
}

RedisReply Convert(const redisReply& reply) {
  RedisReply out;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kString;
      out.text.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(reply.elements);
      for (std::size_t i = 0; i < reply.elements; ++i) {
        out.elements.push_back(Convert(*reply.element[i]));
      }
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

}  // namespace

RedisClient::RedisClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

RedisClient::~RedisClient() { Disconnect(); }

void RedisClient::Disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

std::expected<void, Error> RedisClient::Connect() {
  const timeval tv = ToTimeval(timeout_);
  redisContext* context = redisConnectWithTimeout(host_.c_str(), port_, tv);
  if (context == nullptr) {
    return MakeError(ErrorCode::kUnavailable, "cannot connect to Redis: out of memory");
  }
  if (context->err != 0) {
    std::string message = "cannot connect to Redis at " + host_ + ":" + std::to_string(port_) +
                          ": " + context->errstr;
    redisFree(context);
    return MakeError(ErrorCode::kUnavailable, std::move(message));
  }
  context_ = context;
  applied_timeout_ = std::chrono::milliseconds(0);
  return {};
}

std::expected<RedisReply, Error> RedisClient::Command(const std::vector<std::string>& args) {
  if (context_ == nullptr) {
    if (auto connected = Connect(); !connected) return std::unexpected(connected.error());
  }
  if (applied_timeout_ != timeout_) {
    const timeval tv = ToTimeval(timeout_);
    if (redisSetTimeout(context_, tv) != REDIS_OK) {
      Disconnect();
      return MakeError(ErrorCode::kUnavailable, "cannot set the Redis timeout");
    }
    applied_timeout_ = timeout_;
  }
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (const std::string& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data()));
  if (reply == nullptr) {
    std::string message = "Redis connection to " + host_ + ":" + std::to_string(port_) +
                          " failed: " + (context_->err != 0 ? context_->errstr : "no reply");
    Disconnect();
    return MakeError(ErrorCode::kUnavailable, std::move(message));
  }
  std::expected<RedisReply, Error> result;
  if (reply->type == REDIS_REPLY_ERROR) {
    result = MakeError(ErrorCode::kFailedPrecondition,
                       "Redis answered " + std::string(reply->str, reply->len));
  } else {
    result = Convert(*reply);
  }
  freeReplyObject(reply);
  return result;
}

}  // namespace nbspamd::replication
