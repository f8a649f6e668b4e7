#include "replication/cluster.h"

#include <algorithm>
#include <exception>
#include <random>
#include <utility>

#include "common/hex.h"
#include "common/log.h"

namespace nbspamd::replication {
namespace {

constexpr char kEventField[] = "e";
constexpr char kFamiliesField[] = "f";  // A learn's token families (stream_codec.h).
constexpr char kCountAllField[] = "c";  // A learn counted whatever the regime ("all").

// Atomically: remembers the largest entry id about to be deleted in KEYS[2] (never lowering it),
// then deletes the entries of stream KEYS[1] below ARGV[1]. Returns how many were deleted.
constexpr char kTrimScript[] = R"lua(
local function less(a, b)
  local ams, aseq = string.match(a, '^(%d+)-(%d+)$')
  local bms, bseq = string.match(b, '^(%d+)-(%d+)$')
  ams, aseq, bms, bseq = tonumber(ams), tonumber(aseq), tonumber(bms), tonumber(bseq)
  return ams < bms or (ams == bms and aseq < bseq)
end
local below = redis.call('XREVRANGE', KEYS[1], '(' .. ARGV[1], '-', 'COUNT', 1)
if #below == 0 then return 0 end
local current = redis.call('GET', KEYS[2])
if (not current) or less(current, below[1][1]) then redis.call('SET', KEYS[2], below[1][1]) end
return redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1])
)lua";

// The id of stream KEYS[1]'s last entry, or nil: the entry itself is not sent.
constexpr char kLastIdScript[] = R"lua(
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #newest == 0 then return false end
return newest[1][1]
)lua";

// 1 when stream KEYS[1] holds the entry ARGV[1], else 0.
constexpr char kHasEntryScript[] = R"lua(
return #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1], 'COUNT', 1)
)lua";

std::int64_t NowMilliseconds() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The read timeout of a connection whose longest command takes `longest` (XREAD BLOCK, or
// nothing special), and which may also WAIT for replicas.
std::chrono::milliseconds IoTimeout(const ClusterOptions& options,
                                    std::chrono::milliseconds longest) {
  if (options.min_replicas <= 0) return longest;
  return std::max(longest, options.replica_timeout + std::chrono::seconds(5));
}

double LagSeconds(const std::string& applied, const std::string& last) {
  const auto last_id = StreamId::Parse(last);
  if (!last_id) return 0;
  const StreamId applied_id = StreamId::Parse(applied).value_or(StreamId{});
  if (applied_id >= *last_id) return 0;
  return static_cast<double>(last_id->ms - std::min(applied_id.ms, last_id->ms)) / 1000.0;
}

}  // namespace

ClusterReplicator::ClusterReplicator(storage::Store& store, core::TrainingWriter& writer,
                                     ClusterOptions options)
    : store_(store),
      writer_(writer),
      options_(std::move(options)),
      positions_key_(options_.stream + ":positions"),
      trimmed_key_(options_.stream + ":trimmed"),
      appender_(options_.Target(), IoTimeout(options_, std::chrono::seconds(5))) {
  std::random_device random;
  const std::uint64_t incarnation = (std::uint64_t{random()} << 32) ^ random();
  waiter_prefix_ = options_.name + "/" + std::to_string(incarnation) + "/";
  status_.applied = store_.StreamPosition();
}

ClusterReplicator::~ClusterReplicator() { Stop(); }

std::expected<void, Error> ClusterReplicator::CheckNoGap(RedisClient& redis,
                                                         const std::string& position) {
  auto trimmed = redis.Command({"GET", trimmed_key_});
  if (!trimmed) return std::unexpected(trimmed.error());
  if (trimmed->type != RedisReply::Type::kString) return {};
  if (TrimmedPast(trimmed->text, position)) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the stream '" + options_.stream + "' was trimmed through " + trimmed->text +
                         " but this daemon's model ends at " +
                         (position.empty() ? std::string("the beginning") : position) +
                         ": start it from a checkpoint of another daemon (POST /admin/backup)");
  }
  return {};
}

RedisTarget ClusterOptions::Target() const {
  return RedisTarget{.host = redis_host,
                     .port = redis_port,
                     .sentinels = sentinels,
                     .master_name = sentinel_master,
                     .password = redis_password,
                     .sentinel_password = sentinel_password,
                     .replica = false,
                     .replica_key = {}};
}

std::expected<void, Error> CheckStreamHolds(RedisClient& redis, const std::string& stream,
                                            const std::string& position) {
  const std::optional<StreamId> id = StreamId::Parse(position);
  if (!id || *id == StreamId{}) return {};
  // Whether the entry is there, without sending it (asked once a second when reading replicas).
  auto entry = redis.Command({"EVAL", kHasEntryScript, "1", stream, position});
  if (!entry) return std::unexpected(entry.error());
  if (entry->type == RedisReply::Type::kInteger && entry->integer > 0) return {};
  auto trimmed = redis.Command({"GET", stream + ":trimmed"});
  if (!trimmed) return std::unexpected(trimmed.error());
  if (trimmed->type == RedisReply::Type::kString) {
    // Trimmed through it (by the others, this daemon being away past the retention): not lost.
    const std::optional<StreamId> through = StreamId::Parse(trimmed->text);
    if (through && *id <= *through) return {};
  }
  std::string end = "nothing: it is empty";
  auto last = redis.Command({"XREVRANGE", stream, "+", "-", "COUNT", "1"});
  if (!last) return std::unexpected(last.error());
  if (!last->elements.empty() && !last->elements[0].elements.empty()) {
    end = last->elements[0].elements[0].text;
  }
  return MakeError(ErrorCode::kDataLoss,
                   "stream behind this daemon: the training stream '" + stream +
                       "' lacks the entry " + position +
                       " this daemon applied last (the stream ends at " + end +
                       "): events were lost, e.g. by a failover to a replica that lacked them; "
                       "this daemon applies nothing more: rebuild it from a checkpoint of a "
                       "daemon that did not apply them (docs/SCALING.md)");
}

std::expected<std::string, Error> ReadClusterScanKey(RedisClient& redis,
                                                     const std::string& stream) {
  const std::string name = stream + ":scan-key";
  std::string made_key;
  std::random_device random;  // The system's random source (getrandom).
  for (int i = 0; i < 8; ++i) AppendHex(made_key, random(), 8);
  auto made = redis.Command({"SET", name, made_key, "NX"});
  if (!made) return std::unexpected(made.error());
  auto read = redis.Command({"GET", name});
  if (!read) return std::unexpected(read.error());
  const bool well_formed = read->type == RedisReply::Type::kString && read->text.size() == 64 &&
                           read->text.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!well_formed) {
    return MakeError(ErrorCode::kDataLoss, "'" + name + "' in Redis is not a scan key");
  }
  return std::move(read->text);
}

// Reads the cluster's key of the scan header and hands it on, once; logs what stops it.
void ClusterReplicator::ReadScanKey(RedisClient& redis) {
  if (scan_key_known_ || !options_.scan_key_read) return;
  auto key = ReadClusterScanKey(redis, options_.stream);
  if (!key) {
    if (key.error().code != ErrorCode::kUnavailable) {
      scan_key_known_ = true;  // Not to be fixed by asking again: logged once.
      LogError("cluster: " + key.error().message +
               "; scan headers are signed with this daemon's own key");
    }
    return;
  }
  scan_key_known_ = true;
  options_.scan_key_read(*key);
}

std::expected<void, Error> ClusterReplicator::Start() {
  {
    RedisClient redis(options_.Target());
    ReadScanKey(redis);
    auto checked = CheckNoGap(redis, store_.StreamPosition());
    if (!checked) {
      if (checked.error().code != ErrorCode::kUnavailable) return checked;
      LogWarning("cluster: " + checked.error().message + "; retrying in the background");
    }
  }
  thread_ = std::thread([this] { Run(); });
  return {};
}

void ClusterReplicator::Stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  ExpireWaiters(/*all=*/true);
}

void ClusterReplicator::Pause(std::chrono::milliseconds duration) {
  std::unique_lock lock(stop_mutex_);
  stop_wake_.wait_for(lock, duration, [this] { return stopping_; });
}

std::expected<void, Error> ClusterReplicator::WaitForReplicas() {
  auto waited = appender_.Command({"WAIT", std::to_string(options_.min_replicas),
                                   std::to_string(options_.replica_timeout.count())});
  if (!waited) {
    return MakeError(ErrorCode::kUnavailable,
                     "waiting for the replicas of the training event: " + waited.error().message);
  }
  const long long reached = waited->type == RedisReply::Type::kInteger ? waited->integer : 0;
  if (reached < options_.min_replicas) {
    replica_wait_failures_.fetch_add(1, std::memory_order_relaxed);
    return MakeError(ErrorCode::kUnavailable,
                     "the training event reached " + std::to_string(reached) + " of the " +
                         std::to_string(options_.min_replicas) + " replicas required within " +
                         std::to_string(options_.replica_timeout.count()) +
                         " ms; it may still be applied, and a retry with the same id is harmless");
  }
  return {};
}

void ClusterReplicator::Submit(core::TrainingChange change, core::ReplicatedDone done) {
  StreamEvent event;
  static_cast<core::TrainingChange&>(event) = std::move(change);
  if (gap_) {
    return done(MakeError(ErrorCode::kUnavailable,
                          "this daemon stopped following the training stream: it was trimmed "
                          "past its model"));
  }
  if (behind_) {
    return done(MakeError(ErrorCode::kUnavailable,
                          "this daemon stopped following the training stream: the stream lost "
                          "events this daemon applied"));
  }
  {
    std::lock_guard lock(stop_mutex_);
    if (stopping_) return done(MakeError(ErrorCode::kUnavailable, "the daemon is shutting down"));
  }
  std::expected<RedisReply, Error> appended;
  std::expected<void, Error> replicated;
  std::string waiter;
  {
    std::lock_guard lock(append_mutex_);
    if (options_.wait_applied) {
      waiter = waiter_prefix_ + std::to_string(next_waiter_++);
      event.waiter = waiter;
      std::lock_guard waiters_lock(waiters_mutex_);
      waiters_.emplace(waiter,
                       Waiter{.done = std::move(done),
                              .deadline = std::chrono::steady_clock::now() + options_.wait_timeout,
                              .replicated = options_.min_replicas <= 0,
                              .outcome = std::nullopt});
    }
    std::vector<std::string> command = {"XADD", options_.stream, "*", kEventField,
                                        EncodeStreamEvent(event)};
    if (std::string families = EncodeTokenFamilies(event); !families.empty()) {
      command.push_back(kFamiliesField);
      command.push_back(std::move(families));
    }
    if (event.kind == StreamEvent::Kind::kLearn && event.count_all) {
      command.push_back(kCountAllField);
      command.push_back("all");
    }
    appended = appender_.Command(command);
    // A connection that Redis closed (a restart, a failover) fails once; a fresh one is tried at
    // once (with sentinels: to the primary they name now).
    if (!appended && appended.error().code == ErrorCode::kUnavailable) {
      appended = appender_.Command(command);
    }
    if (appended && appended->type == RedisReply::Type::kString && options_.min_replicas > 0) {
      // On the same connection: WAIT counts the replicas that have this connection's writes.
      replicated = WaitForReplicas();
    }
  }
  if (appended && appended->type != RedisReply::Type::kString) {
    appended = MakeError(ErrorCode::kInternal, "Redis answered XADD without an entry id");
  }
  std::optional<Error> failure;
  if (!appended) {
    failure = appended.error();
    failure->code = ErrorCode::kUnavailable;
    failure->message = "cannot append to the training stream: " + failure->message;
  } else if (!replicated) {
    failure = replicated.error();
  }
  if (failure) {
    if (!appended) {
      LogWarning("cluster: " + failure->message);
    } else if (const auto held_back = replica_log_.Admit()) {
      LogWarning("cluster: " + failure->message, {{"suppressed", std::to_string(*held_back)}});
    }
    if (waiter.empty()) return done(std::unexpected(std::move(*failure)));
    std::unique_lock lock(waiters_mutex_);
    const auto it = waiters_.find(waiter);
    if (it == waiters_.end()) return;  // Expired meanwhile: answered.
    core::ReplicatedDone waiting = std::move(it->second.done);
    waiters_.erase(it);
    lock.unlock();
    return waiting(std::unexpected(std::move(*failure)));
  }
  if (waiter.empty()) return done(core::Replicated{appended->text, std::nullopt});
  if (options_.min_replicas > 0) {
    // Replicated: answer now if it was applied meanwhile, else when it is (Resolve).
    core::ReplicatedDone waiting;
    std::optional<std::expected<core::Replicated, Error>> outcome;
    {
      std::lock_guard lock(waiters_mutex_);
      const auto it = waiters_.find(waiter);
      if (it == waiters_.end()) return;  // Expired meanwhile: answered.
      if (!it->second.outcome) {
        it->second.replicated = true;
        return;
      }
      waiting = std::move(it->second.done);
      outcome = std::move(it->second.outcome);
      waiters_.erase(it);
    }
    waiting(std::move(*outcome));
  }
}

void ClusterReplicator::Resolve(const std::string& waiter, const std::string& stream_id,
                                std::expected<model::LearnStatus, Error> outcome) {
  if (waiter.empty() || !waiter.starts_with(waiter_prefix_)) return;
  std::expected<core::Replicated, Error> result =
      outcome ? std::expected<core::Replicated, Error>(core::Replicated{stream_id, *outcome})
              : std::unexpected(std::move(outcome.error()));
  core::ReplicatedDone done;
  {
    std::lock_guard lock(waiters_mutex_);
    const auto it = waiters_.find(waiter);
    if (it == waiters_.end()) return;
    if (!it->second.replicated) {
      // Applied before WAIT confirmed its replicas: Submit answers once it does.
      it->second.outcome = std::move(result);
      return;
    }
    done = std::move(it->second.done);
    waiters_.erase(it);
  }
  try {
    done(std::move(result));
  } catch (...) {
    // A completion must not throw; the reader goes on.
    NoteCompletionException();
  }
}

void ClusterReplicator::NoteCompletionException() noexcept {
  completion_exceptions_.fetch_add(1, std::memory_order_relaxed);
  try {
    if (const auto held_back = completion_log_.Admit()) {
      LogError("cluster: a completion threw",
               {{"what", DescribeCurrentException()}, {"suppressed", std::to_string(*held_back)}});
    }
  } catch (...) {
  }
}

void ClusterReplicator::NoteReportError(const std::string& what) {
  report_errors_.fetch_add(1, std::memory_order_relaxed);
  if (const auto held_back = report_log_.Admit()) {
    LogWarning("cluster: " + what, {{"suppressed", std::to_string(*held_back)}});
  }
}

void ClusterReplicator::ExpireWaiters(bool all) {
  std::vector<core::ReplicatedDone> expired;
  {
    std::lock_guard lock(waiters_mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (all || it->second.deadline <= now) {
        expired.push_back(std::move(it->second.done));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (core::ReplicatedDone& done : expired) {
    try {
      done(MakeError(ErrorCode::kUnavailable,
                     all ? "the daemon is shutting down before applying this change"
                         : "the change was appended to the training stream but not applied "
                           "here in time; it will be"));
    } catch (...) {
      NoteCompletionException();
    }
  }
}

bool ClusterReplicator::Apply(const std::vector<Entry>& entries) {
  struct Slot {
    std::string waiter;
    std::optional<std::expected<model::LearnStatus, Error>> outcome;
  };
  std::vector<Slot> slots(entries.size());
  std::mutex mutex;
  std::condition_variable finished;
  std::size_t remaining = 0;
  const auto complete = [&](std::size_t i, std::expected<model::LearnStatus, Error> outcome) {
    std::lock_guard lock(mutex);
    slots[i].outcome = std::move(outcome);
    if (--remaining == 0) finished.notify_one();
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto event = DecodeStreamEvent(entries[i].payload);
    if (event) {
      if (auto families = DecodeTokenFamilies(entries[i].families, *event); !families) {
        event = std::unexpected(std::move(families.error()));
      }
    }
    if (event && !entries[i].count.empty()) {
      if (entries[i].count != "all" || event->kind != StreamEvent::Kind::kLearn) {
        event = MakeError(ErrorCode::kDataLoss,
                          "corrupt stream event: a count field \"" + entries[i].count + "\"");
      } else {
        event->count_all = true;
      }
    }
    if (!event) {
      // Written by another version, or damaged: every daemon skips it alike.
      LogError("cluster: skipping stream entry " + entries[i].id + ": " + event.error().message);
      slots[i].outcome = std::unexpected(event.error());
      continue;
    }
    slots[i].waiter = event->waiter;
    {
      std::lock_guard lock(mutex);
      ++remaining;
    }
    const auto learned = [&complete, i](std::expected<model::LearnStatus, Error> outcome) {
      complete(i, std::move(outcome));
    };
    const auto forgotten = [&complete, i](std::expected<void, Error> outcome) {
      if (!outcome) return complete(i, std::unexpected(std::move(outcome.error())));
      complete(i, model::LearnStatus::kLearned);
    };
    const bool for_user = !event->user.empty();
    if (event->kind == StreamEvent::Kind::kLearn) {
      TokenBag bag;
      bag.entries = std::move(event->tokens);
      core::LearnRequest request{std::move(event->id), std::move(event->label), std::move(bag),
                                 std::move(event->origin), event->count_all};
      if (for_user) {
        writer_.LearnForUser(std::move(request), {std::move(event->user), event->train_global},
                             learned, entries[i].id);
      } else {
        writer_.Learn(std::move(request), learned, entries[i].id);
      }
    } else if (event->kind == StreamEvent::Kind::kDeleteUser) {
      writer_.DeleteUser(std::move(event->user), forgotten, entries[i].id);
    } else if (event->kind == StreamEvent::Kind::kRetire) {
      // The whole pass, the global ledger's and the users', in two writes: the next entries are
      // applied after it.
      writer_.RetireLedger(
          event->learned_before, /*max_records=*/0,
          [&complete, i](std::expected<storage::RetireStep, Error> outcome) {
            if (!outcome) return complete(i, std::unexpected(std::move(outcome.error())));
            complete(i, model::LearnStatus::kLearned);
          },
          entries[i].id, "", core::RetireScope::kAll);
    } else if (event->kind == StreamEvent::Kind::kRetireStep) {
      writer_.RetireLedger(
          event->learned_before, event->retire_max_records,
          [&complete, i](std::expected<storage::RetireStep, Error> outcome) {
            if (!outcome) return complete(i, std::unexpected(std::move(outcome.error())));
            complete(i, model::LearnStatus::kLearned);
          },
          entries[i].id, std::move(event->retire_from),
          event->retire_users ? core::RetireScope::kUsers : core::RetireScope::kGlobal);
    } else if (event->kind == StreamEvent::Kind::kExpireUsers) {
      writer_.ExpireUserTokens(
          event->expiry_rule, std::move(event->user_expiry_from), /*max_examined=*/0,
          std::move(event->user_expiry_until),
          [&complete, i](std::expected<storage::UserTokenExpiryStep, Error> outcome) {
            if (!outcome) return complete(i, std::unexpected(std::move(outcome.error())));
            complete(i, model::LearnStatus::kLearned);
          },
          entries[i].id);
    } else if (event->kind == StreamEvent::Kind::kExpire) {
      writer_.ExpireTokens(
          event->expiry_rule, event->expiry_from, /*max_examined=*/0, event->expiry_until,
          [&complete, i](std::expected<storage::TokenExpiryStep, Error> outcome) {
            if (!outcome) return complete(i, std::unexpected(std::move(outcome.error())));
            complete(i, model::LearnStatus::kLearned);
          },
          entries[i].id);
    } else if (for_user) {
      writer_.ForgetForUser(std::move(event->id), {std::move(event->user), event->train_global},
                            forgotten, std::move(event->only_source), entries[i].id);
    } else {
      writer_.Forget(std::move(event->id), forgotten, std::move(event->only_source), entries[i].id);
    }
  }
  {
    std::unique_lock lock(mutex);
    finished.wait(lock, [&] { return remaining == 0; });
  }
  bool failed = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& outcome = *slots[i].outcome;
    // A storage failure (or the writer stopping) is not the event's fault: read it again.
    if (!outcome && (outcome.error().code == ErrorCode::kInternal ||
                     outcome.error().code == ErrorCode::kUnavailable)) {
      if (!failed) LogError("cluster: applying " + entries[i].id + ": " + outcome.error().message);
      failed = true;
      continue;
    }
    Resolve(slots[i].waiter, entries[i].id, *slots[i].outcome);
  }
  return !failed;
}

void ClusterReplicator::Report(RedisClient& redis, bool peers_round, bool trim) {
  const std::int64_t now = NowMilliseconds();
  std::string applied;
  {
    std::lock_guard lock(status_mutex_);
    applied = status_.applied;
  }
  if (auto reported = redis.Command(
          {"HSET", positions_key_, options_.name, EncodePositionReport(applied, now)});
      !reported) {
    // Other daemons may trim past this one for want of it: their own positions still hold the
    // stream back, and this daemon's report is retried at the next round.
    NoteReportError("reporting this daemon's position failed: " + reported.error().message);
  }
  TrimRound round{.now_ms = now,
                  .retention_ms = std::chrono::milliseconds(options_.retention).count(),
                  .self = options_.name,
                  .applied = StreamId::Parse(applied).value_or(StreamId{}),
                  .stream_read = true,
                  .reports = std::nullopt,
                  .known = known_peers_};
  std::string last;
  if (auto newest = redis.Command({"EVAL", kLastIdScript, "1", options_.stream}); !newest) {
    NoteReportError("reading the stream's last entry failed: " + newest.error().message);
    round.stream_read = false;
  } else if (newest->type == RedisReply::Type::kString) {
    last = newest->text;
  }
  if (!peers_round && !trim) {
    // Every daemon reading every daemon's report each second would cost the primary N² a
    // second; the peers are read at trim rounds only.
    if (last.empty()) return;
    std::lock_guard lock(status_mutex_);
    status_.last = last;
    return;
  }
  std::vector<core::ClusterPeer> peers;
  auto all = redis.Command({"HGETALL", positions_key_});
  if (!all) {
    NoteReportError("reading the daemons' positions failed: " + all.error().message);
  } else {
    round.reports.emplace();
    for (std::size_t i = 0; i + 1 < all->elements.size(); i += 2) {
      core::ClusterPeer peer;
      peer.name = all->elements[i].text;
      const std::string& value = all->elements[i + 1].text;
      auto report = DecodePositionReport(value);
      // As written, also when it cannot be parsed.
      peer.position = value.substr(0, value.find(' '));
      peer.seen_seconds_ago = static_cast<double>(now - (report ? report->seen_ms : 0)) / 1000.0;
      peer.lag_seconds = LagSeconds(peer.position, last);
      if (!report) {
        // Whose position, and how recent, is unknown: it might need anything, so TrimFloor keeps
        // the whole stream this round.
        NoteReportError("the position report of daemon '" + peer.name + "' cannot be read: '" +
                        value + "'");
        round.reports->insert_or_assign(peer.name, std::nullopt);
      } else {
        round.reports->insert_or_assign(peer.name, *report);
      }
      peers.push_back(std::move(peer));
    }
  }
  TrimDecision decision = TrimFloor(round);
  known_peers_ = std::move(decision.known);
  for (const auto& [name, position] : decision.missing) {
    NoteReportError("the position report of daemon '" + name +
                    "' is missing; keeping the stream from " + position.ToString());
  }
  {
    std::lock_guard lock(status_mutex_);
    if (!last.empty()) status_.last = last;
    if (all) {
      status_.peers = std::move(peers);
      peers_read_ = std::chrono::steady_clock::now();
    }
  }
  if (!trim || !decision.floor) return;
  const StreamId floor = *decision.floor;
  auto trimmed =
      redis.Command({"EVAL", kTrimScript, "2", options_.stream, trimmed_key_, floor.ToString()});
  if (!trimmed) {
    LogWarning("cluster: trimming the stream failed: " + trimmed.error().message);
  } else if (trimmed->integer > 0) {
    LogInfo("cluster: trimmed " + std::to_string(trimmed->integer) + " entries below " +
            floor.ToString());
  }
}

std::expected<bool, Error> ClusterReplicator::ReadIsReplicated(RedisClient& redis) {
  std::string applied;
  {
    std::lock_guard lock(status_mutex_);
    applied = status_.applied;
  }
  // A write of this connection's, after the read: WAIT then covers everything read before it.
  auto reported = redis.Command(
      {"HSET", positions_key_, options_.name, EncodePositionReport(applied, NowMilliseconds())});
  if (!reported) return std::unexpected(reported.error());
  auto waited = redis.Command({"WAIT", std::to_string(options_.min_replicas),
                               std::to_string(options_.replica_timeout.count())});
  if (!waited) return std::unexpected(waited.error());
  return waited->type == RedisReply::Type::kInteger && waited->integer >= options_.min_replicas;
}

void ClusterReplicator::NoteReadFrom(const RedisClient& reader) {
  std::lock_guard lock(status_mutex_);
  if (status_.read_from == reader.address() &&
      status_.reading_replica == reader.reading_replica()) {
    return;
  }
  status_.read_from = reader.address();
  status_.reading_replica = reader.reading_replica();
  if (options_.read_from_replica) {
    LogInfo("cluster: reading the training stream from " +
            std::string(reader.reading_replica() ? "the replica " : "the primary (no replica) ") +
            reader.address());
  }
}

void ClusterReplicator::Run() {
  constexpr int kBlockMilliseconds = 500;
  const std::chrono::milliseconds io_timeout =
      IoTimeout(options_, std::chrono::milliseconds(kBlockMilliseconds) + std::chrono::seconds(5));
  // The primary: checks, position reports, trims, WAIT; and the stream's reads unless they go
  // to a replica.
  RedisClient control(options_.Target(), io_timeout);
  std::optional<RedisClient> replica;
  if (options_.read_from_replica) {
    RedisTarget target = options_.Target();
    target.replica = true;
    target.replica_key = options_.name;
    replica.emplace(std::move(target), io_timeout);
  }
  RedisClient& reader = replica ? *replica : control;
  std::string last = store_.StreamPosition();
  if (last.empty()) last = "0-0";
  bool checked = false;
  bool peers_read = false;  // The peers' reports are read at the first round, then at trim rounds.
  bool was_connected = true;
  // The last read failed on a replica's connection, which was then chosen again.
  bool reader_dropped = false;
  auto next_report = std::chrono::steady_clock::now();
  auto next_trim = std::chrono::steady_clock::now() + options_.trim_interval;
  const auto disconnected = [&](const Error& error) {
    if (was_connected) LogWarning("cluster: " + error.message + "; retrying");
    was_connected = false;
    checked = false;
    reader_dropped = false;
    {
      std::lock_guard lock(status_mutex_);
      status_.connected = false;
    }
    Pause(std::chrono::milliseconds(200));
  };
  while (true) {
    {
      std::lock_guard lock(stop_mutex_);
      if (stopping_) return;
    }
    ExpireWaiters(/*all=*/false);
    try {
      if (!checked) {
        auto ok = CheckNoGap(control, last == "0-0" ? "" : last);
        if (!ok && ok.error().code == ErrorCode::kUnavailable) {
          disconnected(ok.error());
          continue;
        }
        if (!ok) {
          const bool first = !gap_;
          if (first) LogError("cluster: " + ok.error().message);
          gap_ = true;
          {
            std::lock_guard lock(status_mutex_);
            status_.gap = true;
          }
          if (first && options_.gap_found) options_.gap_found();
          Pause(std::chrono::seconds(5));
          continue;
        }
        if (auto holds = CheckStreamHolds(control, options_.stream, last); !holds) {
          if (holds.error().code == ErrorCode::kUnavailable) {
            disconnected(holds.error());
            continue;
          }
          if (!behind_) LogError("cluster: " + holds.error().message);
          behind_ = true;
          {
            std::lock_guard lock(status_mutex_);
            status_.stream_behind = true;
            status_.stream_behind_reason = holds.error().message;
          }
          Pause(std::chrono::seconds(5));
          continue;
        }
        if (behind_) {
          LogInfo("cluster: the training stream holds this daemon's position " + last +
                  " again; following it");
          behind_ = false;
          std::lock_guard lock(status_mutex_);
          status_.stream_behind = false;
          status_.stream_behind_reason.clear();
        }
        checked = true;
        ReadScanKey(control);
        if (!was_connected) LogInfo("cluster: connected to Redis again at " + control.address());
        was_connected = true;
        std::lock_guard lock(status_mutex_);
        status_.connected = true;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_report) {
        // A primary demoted by a failover answers reads as a replica: follow the new one; a
        // replica read from must still be one.
        if (auto master = control.CheckRole(); !master) {
          disconnected(master.error());
          continue;
        }
        if (replica) {
          if (auto role = replica->CheckRole(); !role) {
            // No longer a replica connected to its primary: not a loss of the cluster. The
            // stream is checked again on the primary, then the next read chooses again (another
            // replica, else the primary).
            LogInfo("cluster: " + role.error().message);
            checked = false;
            continue;
          }
          NoteReadFrom(*replica);  // It may have moved from the primary to a replica.
          // The replica's connection outlives a failover of the primary: whether what was
          // applied from it is still in the stream is asked of the primary every round.
          if (auto holds = CheckStreamHolds(control, options_.stream, last); !holds) {
            if (holds.error().code == ErrorCode::kUnavailable) {
              disconnected(holds.error());
            } else {
              checked = false;  // Reported, and asked again, by the check above.
            }
            continue;
          }
        }
        const bool trim = now >= next_trim;
        Report(control, /*peers_round=*/!peers_read, trim);
        peers_read = true;
        if (trim) next_trim = now + options_.trim_interval;
        next_report = now + options_.report_interval;
      }
      auto read =
          reader.Command({"XREAD", "COUNT", std::to_string(options_.read_count), "BLOCK",
                          std::to_string(kBlockMilliseconds), "STREAMS", options_.stream, last});
      if (!read && read.error().code == ErrorCode::kUnavailable && replica && !reader_dropped) {
        // A replica read from drops its clients when a Sentinel reconfigures it (CLIENT KILL
        // TYPE normal, at every failover), or goes away: not a loss of the cluster while the
        // primary answers. The stream is checked again on the primary (as after any lost
        // connection: Redis may have restarted without it), then the next read chooses again;
        // a second failure in a row is a lost connection.
        LogInfo("cluster: the stream's reading connection: " + read.error().message +
                "; choosing a replica again");
        reader_dropped = true;
        checked = false;
        continue;
      }
      if (!read) {
        if (read.error().code == ErrorCode::kUnavailable) {
          disconnected(read.error());
        } else {
          LogError("cluster: reading the stream: " + read.error().message);
          Pause(std::chrono::seconds(1));
        }
        continue;
      }
      reader_dropped = false;
      if (read->type != RedisReply::Type::kArray || read->elements.empty()) continue;
      const RedisReply& stream = read->elements[0];
      if (stream.elements.size() < 2) continue;
      std::vector<Entry> entries;
      for (const RedisReply& item : stream.elements[1].elements) {
        if (item.elements.size() < 2) continue;
        Entry entry{item.elements[0].text, {}, {}, {}};
        const auto& fields = item.elements[1].elements;
        for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
          if (fields[f].text == kEventField) entry.payload = fields[f + 1].text;
          if (fields[f].text == kFamiliesField) entry.families = fields[f + 1].text;
          if (fields[f].text == kCountAllField) entry.count = fields[f + 1].text;
        }
        entries.push_back(std::move(entry));
      }
      if (entries.empty()) continue;
      NoteReadFrom(reader);
      // Read on a replica, an entry is on one replica already.
      const int replicas_known = replica && replica->reading_replica() ? 1 : 0;
      if (options_.min_replicas > replicas_known) {
        // Applied here only once on enough replicas, so a promoted replica has what every
        // daemon applied: read again until it is.
        auto replicated = ReadIsReplicated(control);
        if (!replicated) {
          if (replicated.error().code == ErrorCode::kUnavailable) {
            disconnected(replicated.error());
          } else {
            LogError("cluster: waiting for replicas: " + replicated.error().message);
            Pause(std::chrono::seconds(1));
          }
          continue;
        }
        if (!*replicated) {
          if (const auto held_back = unreplicated_log_.Admit()) {
            LogWarning("cluster: stream entries through " + entries.back().id +
                           " are on fewer than " + std::to_string(options_.min_replicas) +
                           " replicas; not applied until they are",
                       {{"suppressed", std::to_string(*held_back)}});
          }
          Pause(std::chrono::milliseconds(100));
          continue;
        }
      }
      if (!Apply(entries)) {
        Pause(std::chrono::seconds(1));
        last = store_.StreamPosition();
        if (last.empty()) last = "0-0";
        continue;
      }
      last = entries.back().id;
      std::lock_guard lock(status_mutex_);
      status_.applied = last;
      status_.applied_events += entries.size();
      // Entry ids come from Redis; one that does not parse leaves the high-water mark alone.
      const std::optional<StreamId> applied = StreamId::Parse(last);
      if (applied && StreamId::Parse(status_.last).value_or(StreamId{}) < *applied) {
        status_.last = last;
      }
    } catch (...) {
      // An allocation failure or a bug, of whatever type: keep following the stream rather
      // than stop.
      try {
        LogError("cluster: " + DescribeCurrentException());
      } catch (...) {
      }
      Pause(std::chrono::seconds(1));
    }
  }
}

core::ClusterStatus ClusterReplicator::Status() const {
  core::ClusterStatus status;
  std::chrono::steady_clock::time_point peers_read;
  {
    std::lock_guard lock(status_mutex_);
    status = status_;
    peers_read = peers_read_;
  }
  // The peers were read at the last trim round: their reports are older by now.
  const double since =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - peers_read).count();
  for (core::ClusterPeer& peer : status.peers) peer.seen_seconds_ago += since;
  status.lag_seconds = LagSeconds(status.applied, status.last);
  status.applied_ms = StreamId::Parse(status.applied).value_or(StreamId{}).ms;
  status.completion_exceptions = CompletionExceptions();
  status.report_errors = ReportErrors();
  status.replica_wait_failures = ReplicaWaitFailures();
  {
    std::lock_guard lock(waiters_mutex_);
    status.waiting = waiters_.size();
  }
  return status;
}

std::expected<void, Error> EnableCluster(core::SpamFilter& filter, ClusterOptions options) {
  options.scan_key_read = [&filter](std::string_view key_hex) {
    if (auto used = filter.UseScanKey(key_hex); !used) {
      LogError("cluster: " + used.error().message +
               "; scan headers are signed with this "
               "daemon's own key");
    }
  };
  return filter.EnableReplication([&options](storage::Store& store, core::TrainingWriter& writer)
                                      -> std::expected<std::unique_ptr<core::TrainingLog>, Error> {
    auto cluster = std::make_unique<ClusterReplicator>(store, writer, std::move(options));
    if (auto started = cluster->Start(); !started) return std::unexpected(started.error());
    return cluster;
  });
}

}  // namespace nbspamd::replication
