#include "replication/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace nbspamd::replication {
namespace {

// Whether a Redis error reply says the server cannot serve yet rather than that the command
// failed: LOADING (loading its data set after a restart), MASTERDOWN (a replica that lost its
// primary), BUSY (a script runs), TRYAGAIN (a cluster resharding).
bool IsNotReadyError(std::string_view message) {
  for (const std::string_view code : {"LOADING", "MASTERDOWN", "BUSY", "TRYAGAIN"}) {
    const std::string prefix = "Redis answered " + std::string(code);
    if (message.starts_with(prefix) &&
        (message.size() == prefix.size() || message[prefix.size()] == ' ')) {
      return true;
    }
  }
  return false;
}

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

constexpr std::chrono::milliseconds kSentinelTimeout{1000};

std::expected<std::uint16_t, Error> ParsePort(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > 65535) {
    return MakeError(ErrorCode::kInvalidArgument, "not a port: '" + std::string(text) + "'");
  }
  return static_cast<std::uint16_t>(value);
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::vector<HostPort> ReplicasOf(const RedisReply& role) {
  // ["master", offset, [[ip, port, offset], ...]]
  std::vector<HostPort> replicas;
  if (role.type != RedisReply::Type::kArray || role.elements.size() < 3 ||
      role.elements[0].text != "master") {
    return replicas;
  }
  for (const RedisReply& replica : role.elements[2].elements) {
    if (replica.elements.size() < 2) continue;
    auto port = ParsePort(replica.elements[1].text);
    if (port) replicas.push_back({replica.elements[0].text, *port});
  }
  std::sort(replicas.begin(), replicas.end(), [](const HostPort& a, const HostPort& b) {
    return std::tie(a.host, a.port) < std::tie(b.host, b.port);
  });
  return replicas;
}

// Whether ROLE's reply is a replica's whose link to its primary is up.
bool IsConnectedReplica(const RedisReply& role) {
  // ["slave", master ip, master port, state, offset]
  return role.type == RedisReply::Type::kArray && role.elements.size() >= 4 &&
         role.elements[0].text == "slave" && role.elements[3].text == "connected";
}

std::string RoleName(const RedisReply& role) {
  return role.type == RedisReply::Type::kArray && !role.elements.empty() ? role.elements[0].text
                                                                         : std::string("unknown");
}

}  // namespace

std::optional<std::vector<HostPort>> ParseHostPortList(std::string_view text) {
  std::vector<HostPort> list;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = Trim(text.substr(0, comma));
    const std::size_t colon = item.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    const std::string_view host = item.substr(0, colon);
    if (host.find_first_of(" \t\r\n/[]") != std::string_view::npos) return std::nullopt;
    auto port = ParsePort(item.substr(colon + 1));
    if (!port) return std::nullopt;
    list.push_back({std::string(host), *port});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return list;
}

std::expected<HostPort, Error> AskSentinels(const RedisTarget& target,
                                            std::chrono::milliseconds timeout) {
  std::string errors;
  for (const HostPort& sentinel : target.sentinels) {
    RedisTarget one{.host = sentinel.host,
                    .port = sentinel.port,
                    .sentinels = {},
                    .master_name = target.master_name,
                    .password = target.sentinel_password,
                    .sentinel_password = {},
                    .replica = false,
                    .replica_key = {}};
    RedisClient client(std::move(one), timeout);
    auto reply = client.Command({"SENTINEL", "get-master-addr-by-name", target.master_name});
    std::string error;
    if (!reply) {
      error = reply.error().message;
    } else if (reply->type != RedisReply::Type::kArray || reply->elements.size() != 2) {
      error = "it does not know the master '" + target.master_name + "'";
    } else if (auto port = ParsePort(reply->elements[1].text); !port) {
      error = port.error().message;
    } else {
      return HostPort{reply->elements[0].text, *port};
    }
    errors += (errors.empty() ? "" : "; ") + std::string("sentinel ") + sentinel.host + ":" +
              std::to_string(sentinel.port) + ": " + error;
  }
  return MakeError(ErrorCode::kUnavailable,
                   "no sentinel named the primary '" + target.master_name + "': " + errors);
}

RedisClient::RedisClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
    : RedisClient(RedisTarget{.host = std::move(host),
                              .port = port,
                              .sentinels = {},
                              .master_name = {},
                              .password = {},
                              .sentinel_password = {},
                              .replica = false,
                              .replica_key = {}},
                  timeout) {}

RedisClient::RedisClient(RedisTarget target, std::chrono::milliseconds timeout)
    : target_(std::move(target)), timeout_(timeout) {}

RedisClient::~RedisClient() { Disconnect(); }

void RedisClient::Disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

std::expected<void, Error> RedisClient::ConnectTo(const HostPort& server) {
  address_ = server.host + ":" + std::to_string(server.port);
  const timeval tv = ToTimeval(timeout_);
  redisContext* context = redisConnectWithTimeout(server.host.c_str(), server.port, tv);
  if (context == nullptr) {
    return MakeError(ErrorCode::kUnavailable, "cannot connect to Redis: out of memory");
  }
  if (context->err != 0) {
    std::string message = "cannot connect to Redis at " + address_ + ": " + context->errstr;
    redisFree(context);
    return MakeError(ErrorCode::kUnavailable, std::move(message));
  }
  context_ = context;
  applied_timeout_ = std::chrono::milliseconds(0);
  if (!target_.password.empty()) {
    if (auto auth = Send({"AUTH", target_.password}); !auth) {
      Disconnect();
      // The reply names no secret ("WRONGPASS ..."); kUnavailable: retried, never a gap.
      return MakeError(ErrorCode::kUnavailable,
                       "authenticating to Redis at " + address_ + ": " + auth.error().message);
    }
  }
  return {};
}

std::expected<void, Error> RedisClient::Connect() {
  HostPort server{target_.host, target_.port};
  if (!target_.sentinels.empty()) {
    // A sentinel that does not answer quickly is passed over for the next.
    auto primary = AskSentinels(target_, std::min(timeout_, kSentinelTimeout));
    if (!primary) return std::unexpected(primary.error());
    server = std::move(*primary);
  }
  reading_replica_ = false;
  if (auto connected = ConnectTo(server); !connected) return connected;
  if (target_.sentinels.empty() && !target_.replica) return {};
  auto role = Send({"ROLE"});
  if (!role) {
    Disconnect();
    return MakeError(ErrorCode::kUnavailable, role.error().message);
  }
  if (!target_.sentinels.empty() && RoleName(*role) != "master") {
    Disconnect();
    return MakeError(ErrorCode::kUnavailable,
                     "Redis at " + address_ + " is not the master (its role: " + RoleName(*role) +
                         "); asking the sentinels again");
  }
  if (target_.replica) MoveToReplica(ReplicasOf(*role));
  return {};
}

void RedisClient::MoveToReplica(const std::vector<HostPort>& replicas) {
  if (replicas.empty()) return;
  const std::size_t first = std::hash<std::string>{}(target_.replica_key) % replicas.size();
  redisContext* primary = context_;
  const std::string primary_address = address_;
  const std::chrono::milliseconds primary_timeout = applied_timeout_;
  context_ = nullptr;
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    const HostPort& replica = replicas[(first + i) % replicas.size()];
    if (!ConnectTo(replica)) continue;
    auto role = Send({"ROLE"});
    if (role && IsConnectedReplica(*role)) {
      redisFree(primary);
      reading_replica_ = true;
      return;
    }
    Disconnect();
  }
  // None answers as a replica connected to its primary: read from the primary.
  context_ = primary;
  address_ = primary_address;
  applied_timeout_ = primary_timeout;
}

std::expected<void, Error> RedisClient::CheckRole() {
  if (context_ == nullptr || (target_.sentinels.empty() && !target_.replica)) return {};
  auto role = Send({"ROLE"});
  if (!role) {
    Disconnect();
    return MakeError(ErrorCode::kUnavailable, role.error().message);
  }
  std::string wrong;
  if (target_.replica && reading_replica_) {
    if (!IsConnectedReplica(*role)) {
      wrong = " is no longer a replica connected to its primary; choosing again";
    }
  } else if (!target_.sentinels.empty() && RoleName(*role) != "master") {
    wrong = " is not the master (its role: " + RoleName(*role) + "); asking the sentinels again";
  } else if (target_.replica) {
    // Read from the primary for want of a replica: move to one that is there again. Not a loss
    // of the connection (the primary's stays if none answers), so nothing for the caller to do.
    MoveToReplica(ReplicasOf(*role));
  }
  if (wrong.empty()) return {};
  Disconnect();
  return MakeError(ErrorCode::kUnavailable, "Redis at " + address_ + wrong);
}

std::expected<RedisReply, Error> RedisClient::Command(const std::vector<std::string>& args) {
  if (context_ == nullptr) {
    if (auto connected = Connect(); !connected) return std::unexpected(connected.error());
  }
  auto reply = Send(args);
  if (!reply && reply.error().code == ErrorCode::kFailedPrecondition &&
      reply.error().message.starts_with("Redis answered READONLY")) {
    // A primary demoted to a replica by a failover: find the new one at the next command.
    Disconnect();
    return MakeError(ErrorCode::kUnavailable,
                     reply.error().message + " (at " + address_ + "; no longer the primary)");
  }
  if (!reply && reply.error().code == ErrorCode::kFailedPrecondition &&
      IsNotReadyError(reply.error().message)) {
    // Redis cannot serve yet (it is loading its data after a restart, a replica has lost its
    // primary, a script runs): nothing about the command or the stream. Connect afresh later.
    Disconnect();
    return MakeError(ErrorCode::kUnavailable,
                     reply.error().message + " (at " + address_ + "; not ready)");
  }
  return reply;
}

std::expected<RedisReply, Error> RedisClient::Send(const std::vector<std::string>& args) {
  if (context_ == nullptr) return MakeError(ErrorCode::kUnavailable, "not connected to Redis");
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
    std::string message = "Redis connection to " + address_ +
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
