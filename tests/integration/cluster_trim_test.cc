// Trimming of the training stream, end to end: real redis-server, real RocksDB models, the
// daemon's own SpamFilter and ClusterReplicator, in this process so that the retention window and
// the trim interval can be seconds instead of the configurable minimum of a minute. The stream
// must shrink only below what every daemon seen within the window still needs, a daemon whose
// model ends inside the trimmed part must refuse to start, and a daemon joining from a
// checkpoint must converge.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "core/spam_filter.h"
#include "replication/cluster.h"
#include "replication/redis_client.h"
#include "storage/rocksdb_store.h"
#include "tests/support/redis_process.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

using core::SpamFilter;
using core::SpamFilterOptions;
using replication::ClusterOptions;
using replication::RedisClient;
using replication::RedisReply;

// Long enough for ten trains under ThreadSanitizer; every wait below is measured from the stream
// entries' own timestamps, so a slow machine makes the test longer, not wrong.
constexpr auto kRetention = std::chrono::seconds(4);
constexpr std::int64_t kRetentionMs = 4000;
constexpr char kStream[] = "trim-test";

ClusterOptions Options(unsigned short redis_port, const std::string& name) {
  ClusterOptions options;
  options.redis_port = redis_port;
  options.stream = kStream;
  options.name = name;
  options.wait_applied = true;  // A train returns once applied here.
  options.retention = kRetention;
  options.report_interval = std::chrono::milliseconds(100);
  options.trim_interval = std::chrono::milliseconds(200);
  return options;
}

std::unique_ptr<SpamFilter> OpenFilter(const std::string& path) {
  auto store = storage::RocksdbStore::Open(path);
  if (!store) {
    ADD_FAILURE() << store.error().message;
    return nullptr;
  }
  return std::make_unique<SpamFilter>(std::move(*store), SpamFilterOptions{});
}

std::int64_t NowMilliseconds() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> StreamIds(RedisClient& redis) {
  std::vector<std::string> ids;
  auto range = redis.Command({"XRANGE", kStream, "-", "+"});
  EXPECT_TRUE(range.has_value());
  if (!range) return ids;
  for (const RedisReply& entry : range->elements) ids.push_back(entry.elements.at(0).text);
  return ids;
}

std::string Trimmed(RedisClient& redis) {
  auto trimmed = redis.Command({"GET", std::string(kStream) + ":trimmed"});
  return trimmed && trimmed->type == RedisReply::Type::kString ? trimmed->text : "";
}

std::int64_t EntryMilliseconds(const std::string& stream_id) {
  return static_cast<std::int64_t>(replication::StreamId::Parse(stream_id)->ms);
}

// How many trim rounds reached Redis: a round that read everything it needs and found a floor
// runs the trim script (EVAL) once, trimming or not, and nothing else in these tests uses EVAL.
// Counted by Redis itself (INFO commandstats); 0 before the first.
std::int64_t TrimRounds(RedisClient& redis) {
  auto info = redis.Command({"INFO", "commandstats"});
  EXPECT_TRUE(info.has_value());
  if (!info) return 0;
  const std::string marker = "cmdstat_eval:calls=";
  const std::size_t at = info->text.find(marker);
  if (at == std::string::npos) return 0;
  return std::stoll(info->text.substr(at + marker.size()));
}

// Waits (at most 10 s, polling) until Redis has run `rounds` trim rounds in all; false if not.
bool WaitForTrimRounds(RedisClient& redis, std::int64_t rounds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (TrimRounds(redis) < rounds) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Sleeps until the wall clock reads `unix_ms`.
void SleepUntil(std::int64_t unix_ms) {
  const std::int64_t now = NowMilliseconds();
  if (unix_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(unix_ms - now));
}

// Waits (at most 10 s, polling) until the stream holds exactly `expected`; returns what it holds.
std::vector<std::string> WaitForStream(RedisClient& redis,
                                       const std::vector<std::string>& expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<std::string> ids = StreamIds(redis);
  while (ids != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ids = StreamIds(redis);
  }
  return ids;
}

// Waits (at most 10 s) until `filter` has applied the stream through `position`.
bool WaitApplied(const SpamFilter& filter, const std::string& position) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto status = filter.Cluster();
    if (status && !status->applied.empty() &&
        *replication::StreamId::Parse(status->applied) >= *replication::StreamId::Parse(position)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Waits (at most 10 s) until `filter` lists daemon `name` at `position` among its peers.
bool WaitForPeer(const SpamFilter& filter, const std::string& name, const std::string& position) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (const auto status = filter.Cluster()) {
      for (const core::ClusterPeer& peer : status->peers) {
        if (peer.name == name && peer.position == position) return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string Train(SpamFilter& filter, int i) {
  std::string text = i % 2 == 0 ? "cheap pills offer number " : "lunch meeting notes ";
  text += std::to_string(i);
  auto trained = filter.Train(text, i % 2 == 0 ? "spam" : "ham", "m" + std::to_string(i));
  EXPECT_TRUE(trained.has_value()) << (trained ? "" : trained.error().message);
  return trained ? trained->stream_id : "";
}

TEST(ClusterTrimTest, TheStreamShrinksOnlyBelowWhatALiveDaemonNeedsAndAGapRefusesToStart) {
  TempDir dir;
  auto redis_server = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis_server.has_value()) << redis_server.error();
  RedisClient redis("127.0.0.1", redis_server->port());

  auto a = OpenFilter(dir.Join("a"));
  auto b = OpenFilter(dir.Join("b"));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(replication::EnableCluster(*a, Options(redis_server->port(), "a")).has_value());
  ASSERT_TRUE(replication::EnableCluster(*b, Options(redis_server->port(), "b")).has_value());

  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Train(*a, i));
  ASSERT_TRUE(WaitApplied(*b, ids.back()));
  // Its report says so (else its first one, "0-0", would hold the whole stream back until the
  // window passes, and no trim round would run).
  ASSERT_TRUE(WaitForPeer(*a, "b", ids.back()));
  b.reset();  // Daemon b stops with its model at ids[4] and is not seen again.
  const std::int64_t b_stopped = NowMilliseconds();

  // A live daemon that has applied only ids[2], reporting as every daemon does (a jthread, so
  // that a failed assertion still stops it).
  std::jthread lagging([port = redis_server->port(), position = ids[2]](std::stop_token stop) {
    RedisClient reporter("127.0.0.1", port);
    while (!stop.stop_requested()) {
      (void)reporter.Command({"HSET", std::string(kStream) + ":positions", "lagging",
                              position + " " + std::to_string(NowMilliseconds())});
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  for (int i = 5; i < 10; ++i) ids.push_back(Train(*a, i));

  // Inside the window nothing goes, although b is gone: after two trim rounds since the last
  // train (so at least one that started after it), while the oldest entry is still younger than
  // the window, the stream is whole.
  const std::int64_t rounds_before = TrimRounds(redis);
  ASSERT_TRUE(WaitForTrimRounds(redis, rounds_before + 2))
      << "no trim round ran (" << TrimRounds(redis) - rounds_before << " of 2): nothing is tested";
  const std::vector<std::string> early_stream = StreamIds(redis);
  const std::string early_trimmed = Trimmed(redis);
  ASSERT_LT(NowMilliseconds(), EntryMilliseconds(ids[0]) + kRetentionMs)
      << "the trains took longer than the window: a whole stream would prove nothing";
  EXPECT_EQ(early_stream, ids);
  EXPECT_EQ(early_trimmed, "");

  // Past the window every entry is old and b no longer counts, but the lagging daemon still
  // needs ids[2] onwards.
  SleepUntil(std::max(EntryMilliseconds(ids.back()), b_stopped) + kRetentionMs + 500);
  EXPECT_EQ(WaitForStream(redis, {ids.begin() + 2, ids.end()}),
            std::vector<std::string>(ids.begin() + 2, ids.end()));
  EXPECT_EQ(Trimmed(redis), ids[1]);

  // Once it stops reporting for longer than the window, only what a (seen) still needs stays.
  lagging.request_stop();
  lagging.join();
  SleepUntil(NowMilliseconds() + kRetentionMs + 500);
  EXPECT_EQ(WaitForStream(redis, {ids.back()}), std::vector<std::string>{ids.back()});
  EXPECT_EQ(Trimmed(redis), ids[8]);

  // b's model ends at ids[4], inside the trimmed part: it refuses to start, and says how to fix.
  b = OpenFilter(dir.Join("b"));
  ASSERT_TRUE(b);
  const auto refused = replication::EnableCluster(*b, Options(redis_server->port(), "b"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message.find("checkpoint"), std::string::npos)
      << refused.error().message;
  b.reset();

  // A daemon started from a checkpoint of a joins, catches up and holds a's model.
  ASSERT_TRUE(a->Backup(dir.Join("c")).has_value());
  ids.push_back(Train(*a, 10));
  auto c = OpenFilter(dir.Join("c"));
  ASSERT_TRUE(c);
  ASSERT_TRUE(replication::EnableCluster(*c, Options(redis_server->port(), "c")).has_value());
  ids.push_back(Train(*a, 11));
  ASSERT_TRUE(WaitApplied(*c, ids.back()));
  EXPECT_EQ(*c->Stats(), *a->Stats());
  for (const char* probe : {"cheap pills offer", "lunch meeting", "number 7 notes"}) {
    const auto at_a = a->Classify(probe, 0);
    const auto at_c = c->Classify(probe, 0);
    ASSERT_TRUE(at_a.has_value() && at_c.has_value());
    EXPECT_EQ(*at_a->result.log_odds, *at_c->result.log_odds) << probe;
  }
}

std::uint64_t ReportErrors(const SpamFilter& filter) { return filter.Cluster()->report_errors; }

TEST(ClusterTrimTest, AVanishedReportStillHoldsTheStreamBackAndFailedReadsTrimNothing) {
  TempDir dir;
  auto redis_server = RedisProcess::Start(dir.path().string(), FreeLoopbackPort());
  ASSERT_TRUE(redis_server.has_value()) << redis_server.error();
  RedisClient redis("127.0.0.1", redis_server->port());
  const std::string positions = std::string(kStream) + ":positions";

  auto a = OpenFilter(dir.Join("a"));
  ASSERT_TRUE(a);
  ASSERT_TRUE(replication::EnableCluster(*a, Options(redis_server->port(), "a")).has_value());
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Train(*a, i));

  // A live daemon that has applied only ids[2], reporting for a while, then gone from the hash
  // altogether (deleted by hand, or lost by Redis) instead of merely going quiet.
  std::jthread lagging([port = redis_server->port(), position = ids[2]](std::stop_token stop) {
    RedisClient reporter("127.0.0.1", port);
    while (!stop.stop_requested()) {
      (void)reporter.Command({"HSET", std::string(kStream) + ":positions", "lagging",
                              position + " " + std::to_string(NowMilliseconds())});
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  ASSERT_TRUE(WaitForPeer(*a, "lagging", ids[2]));
  SleepUntil(EntryMilliseconds(ids.back()) + 4000);  // 3 s of slack for the check below.
  lagging.request_stop();
  lagging.join();
  const std::int64_t lagging_last_seen = NowMilliseconds() - 100;
  ASSERT_TRUE(redis.Command({"HDEL", positions, "lagging"}).has_value());
  const std::uint64_t errors_before_gone = ReportErrors(*a);

  // Past the window for every entry but not for the lagging daemon, last seen 4 s later: what it
  // needs stays, although no report says so any more.
  SleepUntil(EntryMilliseconds(ids.back()) + kRetentionMs + 1000);
  const auto trimmed_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Trimmed(redis).empty() && std::chrono::steady_clock::now() < trimmed_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::vector<std::string> held = StreamIds(redis);
  const std::string held_trimmed = Trimmed(redis);
  ASSERT_LT(NowMilliseconds(), lagging_last_seen + kRetentionMs)
      << "too slow: the lagging daemon's window passed before the check";
  EXPECT_EQ(held, std::vector<std::string>(ids.begin() + 2, ids.end()));
  EXPECT_EQ(held_trimmed, ids[1]);
  EXPECT_GT(ReportErrors(*a), errors_before_gone);  // The missing report was noticed.

  // Once its window has passed too, it holds nothing back.
  SleepUntil(lagging_last_seen + kRetentionMs + 500);
  EXPECT_EQ(WaitForStream(redis, {ids.back()}), std::vector<std::string>{ids.back()});

  // The positions cannot be read (here: the key holds the wrong type, so HSET and HGETALL fail):
  // rounds go by, each failure counted, and nothing is trimmed although ids[4] is old enough.
  // (Broken first: until then, a's own position, ids[4], keeps ids[4].)
  ASSERT_TRUE(redis.Command({"SET", positions, "not a hash"}).has_value());
  ids.push_back(Train(*a, 5));
  const std::uint64_t errors_before_broken = ReportErrors(*a);
  const auto errors_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ReportErrors(*a) < errors_before_broken + 6 &&
         std::chrono::steady_clock::now() < errors_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(ReportErrors(*a), errors_before_broken + 6);  // Three rounds, HSET and HGETALL each.
  EXPECT_EQ(StreamIds(redis), std::vector<std::string>(ids.end() - 2, ids.end()));

  // Readable again: ids[4] goes at the next trim.
  ASSERT_TRUE(redis.Command({"DEL", positions}).has_value());
  EXPECT_EQ(WaitForStream(redis, {ids.back()}), std::vector<std::string>{ids.back()});
}

}  // namespace
}  // namespace nbspamd::testing
