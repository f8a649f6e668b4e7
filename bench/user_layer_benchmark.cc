// The user layer benchmark: what per-user layers cost on the classify path, in
// memory and on disk, as the number of users with a layer grows.
//
//   user_layer_benchmark DIR USERS [MESSAGES_PER_USER] [TOKENS_PER_MESSAGE] [CACHE_MB]
//
// Writes into the new folder DIR a synthetic global model of 100,000 tokens (bench/
// synthetic_model.h) and USERS user layers, each learned from MESSAGES_PER_USER (default 5)
// messages of TOKENS_PER_MESSAGE (default 50) tokens drawn from the global vocabulary (user-only
// feedback), 256 deltas a synced write; closes it (RocksDB flushes), compacts the users family,
// reopens it with a user layer cache of CACHE_MB (default 256) and prints key=value figures:
//   write_s                 writing the user layers
//   user_tokens             Σ |V_u| over all users
//   disk_bytes_per_user_token  bytes of the users family's table files (stats, token records,
//                           ledger and source index) / user_tokens, after compaction
//   memory_bytes_per_user_token  the cache's bytes / the tokens of the layers it holds, after
//                           reading the first min(USERS, 1000) users into the empty cache
//   {global,hot,uniform}_{msgs_per_s,p50_us,p99_us}  one 200-token message, one thread:
//     global   Store::Read + model::Classify (no user)
//     hot      Store::Read + Store::ReadUser + model::ClassifyLayered, users drawn from 100
//              (always in memory)
//     uniform  the same with users drawn uniformly from all USERS, after every user was read
//              once (hits and misses as the cache has them in steady state);
//              uniform_miss_rate is the share of reads that loaded a layer
//   miss_{p50_us,p99_us}    Store::ReadUser of a user not in memory (one scan of its records),
//                           over the first min(USERS, 1000) users read after the open
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/synthetic_model.h"
#include "model/classifier.h"
#include "model/layered.h"
#include "model/user_layer.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kGlobalTokens = 100'000;
constexpr std::size_t kMessages = 20'000;

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

double QuantileMicros(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  return values[index] * 1e6;
}

// `prefix` followed by `i` (a helper: GCC 12 warns wrongly about "literal" + std::to_string).
std::string Numbered(const char* prefix, std::uint64_t i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

std::string UserName(std::uint64_t i) { return Numbered("user", i); }

void Fail(const char* what, const Error& error) {
  std::fprintf(stderr, "%s: %s\n", what, error.message.c_str());
  std::exit(1);
}

std::unique_ptr<storage::RocksdbStore> OpenOrExit(const std::string& path, std::size_t cache_mb) {
  storage::RocksdbStoreOptions options;
  options.user_cache_bytes = cache_mb << 20;
  options.user_token_limit = 0;
  auto store = storage::RocksdbStore::Open(path, options);
  if (!store) Fail("opening the folder", store.error());
  return std::move(*store);
}

// Compacts the users family of the closed folder `path` and returns its table files' bytes.
std::uint64_t UsersFamilyBytes(const std::string& path) {
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(rocksdb::Options(), path, &names).ok()) std::exit(1);
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  if (!rocksdb::DB::Open(rocksdb::Options(), path, families, &handles, &db).ok()) std::exit(1);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "users") continue;
    (void)db->CompactRange(rocksdb::CompactRangeOptions(), handles[i], nullptr, nullptr);
    rocksdb::ColumnFamilyMetaData meta;
    db->GetColumnFamilyMetaData(handles[i], &meta);
    bytes = meta.size;
  }
  for (auto* handle : handles) (void)db->DestroyColumnFamilyHandle(handle);
  delete db;
  return bytes;
}

struct Timing {
  double msgs_per_s = 0, p50_us = 0, p99_us = 0;
};

Timing Time(const std::vector<double>& seconds) {
  double total = 0;
  for (double s : seconds) total += s;
  return {static_cast<double>(seconds.size()) / total, QuantileMicros(seconds, 0.5),
          QuantileMicros(seconds, 0.99)};
}

void Print(const char* name, const Timing& timing) {
  std::printf(" %s_msgs_per_s=%.0f %s_p50_us=%.1f %s_p99_us=%.1f", name, timing.msgs_per_s, name,
              timing.p50_us, name, timing.p99_us);
}

int Run(const std::string& path, std::uint64_t users, std::uint64_t messages_per_user,
        std::size_t tokens_per_message, std::size_t cache_mb) {
  if (std::filesystem::exists(path)) {
    std::fprintf(stderr, "%s exists already\n", path.c_str());
    return 1;
  }
  std::mt19937_64 random(users);
  double write_seconds = 0;
  {
    auto store = OpenOrExit(path, cache_mb);
    if (auto written = WriteSyntheticModel(*store, kGlobalTokens); !written) {
      Fail("writing the global model", written.error());
    }
    const auto start = Clock::now();
    std::vector<model::Delta> deltas;
    const auto flush = [&] {
      auto applied = store->ApplyBatch(deltas);
      if (!applied) Fail("writing user layers", applied.error());
      for (const auto& result : *applied) {
        if (!result) Fail("writing a user layer", result.error());
      }
      deltas.clear();
    };
    const auto stats = store->Stats();
    for (std::uint64_t u = 0; u < users; ++u) {
      for (std::uint64_t m = 0; m < messages_per_user; ++m) {
        const TokenBag bag = SyntheticMessage(random, kGlobalTokens, tokens_per_message);
        model::Delta delta;
        (void)model::AddUserLearn(delta, UserName(u), Numbered("m", m), m % 2 ? "spam" : "ham", bag,
                                  std::nullopt, *stats);
        deltas.push_back(std::move(delta));
      }
      if (deltas.size() >= 256) flush();
    }
    if (!deltas.empty()) flush();
    write_seconds = Seconds(Clock::now() - start);
  }
  const std::uint64_t disk_bytes = UsersFamilyBytes(path);

  auto store = OpenOrExit(path, cache_mb);
  const auto global = store->Stats();
  std::uint64_t user_tokens = 0;
  const model::LayerOptions layer;
  const model::ClassifyOptions options;
  double sink = 0;

  // Misses and memory: the first min(USERS, 1000) users read into an empty cache, each read a
  // miss; then the cache's bytes over the tokens of those layers.
  std::vector<TokenBag> bags;
  for (int i = 0; i < 500; ++i) bags.push_back(SyntheticMessage(random, kGlobalTokens));
  std::vector<double> miss_seconds;
  std::uint64_t cached_tokens = 0;
  const std::uint64_t first_users = std::min<std::uint64_t>(users, 1000);
  for (std::uint64_t u = 0; u < first_users; ++u) {
    const auto start = Clock::now();
    auto user = store->ReadUser(UserName(u), *global, bags[u % bags.size()].entries);
    miss_seconds.push_back(Seconds(Clock::now() - start));
    if (!user || !user->has_value()) Fail("reading a user layer", Error{ErrorCode::kInternal, ""});
    cached_tokens += (*user)->stats->vocabulary_size;
  }
  const double memory_per_token =
      static_cast<double>(store->UserFigures().cache_bytes) / static_cast<double>(cached_tokens);

  const auto classify_global = [&](const TokenBag& bag) {
    const model::Snapshot snapshot = store->Read(bag.entries);
    const auto result = model::Classify(bag, snapshot, options);
    sink += result ? result->classes[0].probability : 0;
  };
  const auto classify_user = [&](const TokenBag& bag, const std::string& user) {
    const model::Snapshot snapshot = store->Read(bag.entries);
    auto layer_snapshot = store->ReadUser(user, *snapshot.stats, bag.entries);
    if (!layer_snapshot) Fail("reading a user layer", layer_snapshot.error());
    std::optional<model::Snapshot> user_snapshot = std::move(*layer_snapshot);
    if (!user_snapshot) {
      user_snapshot = model::EmptyLayerSnapshot(*snapshot.stats, bag.entries.size());
    }
    const auto result = model::ClassifyLayered(bag, snapshot, *user_snapshot, options, layer);
    sink += result ? result->classes[0].probability : 0;
  };
  const auto run = [&](const auto& classify) {
    std::vector<double> seconds;
    seconds.reserve(kMessages);
    for (std::size_t i = 0; i < kMessages; ++i) {
      const TokenBag& bag = bags[i % bags.size()];
      const auto start = Clock::now();
      classify(bag);
      seconds.push_back(Seconds(Clock::now() - start));
    }
    return Time(seconds);
  };
  const Timing global_timing = run(classify_global);
  const std::uint64_t hot_users = std::min<std::uint64_t>(users, 100);
  const Timing hot_timing =
      run([&](const TokenBag& bag) { classify_user(bag, UserName(random() % hot_users)); });
  // Warm-up: every user read once, so that the cache holds what it would in steady state.
  for (std::uint64_t u = first_users; u < users; ++u) {
    if (!store->ReadUser(UserName(u), *global, {})) std::exit(1);
  }
  const auto before = store->UserFigures();
  const Timing uniform_timing =
      run([&](const TokenBag& bag) { classify_user(bag, UserName(random() % users)); });
  const auto after = store->UserFigures();
  const double reads = static_cast<double>((after.cache_hits + after.cache_misses) -
                                           (before.cache_hits + before.cache_misses));
  const double miss_rate = static_cast<double>(after.cache_misses - before.cache_misses) / reads;

  // Σ |V_u|, last: it reads every layer.
  for (std::uint64_t u = 0; u < users; ++u) {
    auto stats = store->UserStats(UserName(u));
    if (!stats || !stats->has_value()) Fail("reading user stats", Error{ErrorCode::kInternal, ""});
    user_tokens += (*stats)->vocabulary_size;
  }
  std::printf(
      "users=%llu messages_per_user=%llu tokens_per_message=%zu cache_mb=%zu write_s=%.1f"
      " user_tokens=%llu disk_bytes_per_user_token=%.1f memory_bytes_per_user_token=%.1f"
      " cached_layers=%llu",
      static_cast<unsigned long long>(users), static_cast<unsigned long long>(messages_per_user),
      tokens_per_message, cache_mb, write_seconds, static_cast<unsigned long long>(user_tokens),
      static_cast<double>(disk_bytes) / static_cast<double>(user_tokens), memory_per_token,
      static_cast<unsigned long long>(after.cached_layers));
  Print("global", global_timing);
  Print("hot", hot_timing);
  Print("uniform", uniform_timing);
  std::printf(" uniform_miss_rate=%.3f miss_p50_us=%.1f miss_p99_us=%.1f sink=%g\n", miss_rate,
              QuantileMicros(miss_seconds, 0.5), QuantileMicros(miss_seconds, 0.99), sink);
  return 0;
}

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s DIR USERS [MESSAGES_PER_USER] [TOKENS_PER_MESSAGE] [CACHE_MB]\n",
                 argv[0]);
    return 2;
  }
  const auto number = [&](int i, std::uint64_t fallback) {
    return argc > i ? std::strtoull(argv[i], nullptr, 10) : fallback;
  };
  return nbspamd::bench::Run(argv[1], number(2, 1), number(3, 5), number(4, 50), number(5, 256));
}
