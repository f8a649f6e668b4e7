// How long the model expiry holds up training, and whether it keeps up (docs/STORAGE.md "Token
// expiry"): a RocksDB model on disk learns a day of mail at ten times a busy site's rate
// (100,000 messages of 200 tokens: 180 drawn from a shared vocabulary, 20 words never seen before,
// as new words keep coming), learned_at spread over the day; one message in kUserShare is also
// learned into the layer of one of kUsers users. Then the ledger retention retires all of it in
// steps of core::kRetireStepRecords records and the token expiry drops the words seen once in
// steps of about core::kExpiryStepTokens base records, the global model's and then the user
// layers', as the daemon's pass does. Each step is one write under the store's write lock: its
// time is how long training waits for it at most (classification reads memory and never waits).
// Prints the step times (median, 99th percentile, max) and how long a day's pass takes against
// the day.
//
// The steps are those of a standalone daemon (each token step looks at kExpiryStepTokens base
// records from where the last one stopped), or with --cluster those every daemon of a cluster
// applies from the training stream (docs/SCALING.md): retire steps from the starts
// Store::RetireStepStarts cuts ahead of time, the global expiry in equal ranges of the token hash
// space and the users' in the ranges storage::UserExpiryBounds cuts, each range looked at whole.
//
//   build/release/bench/expiry_steps_benchmark [messages, default 100000] [folder, default /tmp]
//       [--cluster]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/spam_filter.h"
#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/expiry_bounds.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kSharedVocabulary = 200'000;
constexpr std::size_t kSharedTokens = 180;
constexpr std::size_t kNewTokens = 20;
constexpr std::size_t kGroup = 256;  // Learns a write, as the training writer groups them.
constexpr std::int64_t kDay = 86400;
constexpr std::size_t kUserShare = 10;  // One message in this many is also a user's.
constexpr std::size_t kUsers = 500;

struct Times {
  std::vector<double> ms;

  void Add(Clock::duration d) {
    ms.push_back(std::chrono::duration<double, std::milli>(d).count());
  }
  [[nodiscard]] double Quantile(double q) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))];
  }
  [[nodiscard]] double Total() const {
    double total = 0;
    for (const double t : ms) total += t;
    return total;
  }
};

// Word number `n` as a token hash: spread over the whole hash space as XXH3's are (the cluster's
// expiry steps cut that space into equal ranges), distinct for distinct words (SplitMix64's
// finaliser is a bijection).
TokenHash WordHash(std::uint64_t n) {
  n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ULL;
  n = (n ^ (n >> 27)) * 0x94d049bb133111ebULL;
  return n ^ (n >> 31);
}

TokenBag Message(std::mt19937_64& random, std::uint64_t& next_new) {
  std::uniform_int_distribution<std::uint64_t> shared(1, kSharedVocabulary);
  TokenBag bag;
  for (std::size_t i = 0; i < kSharedTokens; ++i) {
    bag.entries.push_back({WordHash(shared(random) * 2), 1});
  }
  for (std::size_t i = 0; i < kNewTokens; ++i) {
    bag.entries.push_back({WordHash((next_new++) * 2 + 1), 1});
  }
  std::sort(bag.entries.begin(), bag.entries.end(),
            [](const BagEntry& a, const BagEntry& b) { return a.hash < b.hash; });
  bag.entries.erase(
      std::unique(bag.entries.begin(), bag.entries.end(),
                  [](const BagEntry& a, const BagEntry& b) { return a.hash == b.hash; }),
      bag.entries.end());
  return bag;
}

// Prints what the steps of one kind did and their times.
void Report(const char* what, std::uint64_t done, const char* unit, Times& times) {
  std::printf("%s: %llu %s in %zu steps, %.2f s; step median %.2f ms, p99 %.2f ms, max %.2f ms\n",
              what, static_cast<unsigned long long>(done), unit, times.ms.size(),
              times.Total() / 1000, times.Quantile(0.5), times.Quantile(0.99), times.Quantile(1.0));
}

// Runs and times one step; false (with a message) on its error.
template <typename Step>
bool Timed(Times& times, const char* what, Step step) {
  const auto start = Clock::now();
  auto result = step();
  times.Add(Clock::now() - start);
  if (!result) std::fprintf(stderr, "%s: %s\n", what, result.error().message.c_str());
  return result.has_value();
}

// The ledger retention of the global ledger, or with `users` the users' ledgers, in steps of
// core::kRetireStepRecords; with `cluster`, from the starts cut ahead of time. Adds the records
// retired to `retired`.
bool Retire(storage::RocksdbStore& store, bool users, bool cluster, Times& times,
            std::uint64_t& retired) {
  const auto step = [&](std::string_view from) {
    return users ? store.RetireUserLedgers(kDay, core::kRetireStepRecords, "", from)
                 : store.RetireLedger(kDay, core::kRetireStepRecords, "", from);
  };
  const char* what = users ? "retire users" : "retire";
  if (cluster) {
    const auto start = Clock::now();
    auto starts = store.RetireStepStarts(kDay, core::kRetireStepRecords, users);
    if (!starts) {
      std::fprintf(stderr, "%s: %s\n", what, starts.error().message.c_str());
      return false;
    }
    std::printf("%s: cutting %zu steps took %.2f s (a snapshot read, outside the write lock)\n",
                what, starts->size() + 1,
                std::chrono::duration<double>(Clock::now() - start).count());
    starts->insert(starts->begin(), "");
    for (const std::string& from : *starts) {
      std::expected<storage::RetireStep, Error> result;
      if (!Timed(times, what, [&] { return result = step(from); })) return false;
      retired += result->retired;
    }
    return true;
  }
  std::string from;
  for (bool more = true; more;) {
    std::expected<storage::RetireStep, Error> result;
    if (!Timed(times, what, [&] { return result = step(from); })) return false;
    retired += result->retired;
    more = result->more;
    from = result->next;
  }
  return true;
}

// The token expiry of the global model, as ModelUpkeep::ExpireTokensAsync cuts it.
bool ExpireGlobal(storage::RocksdbStore& store, const storage::TokenExpiryRule& rule, bool cluster,
                  Times& times, std::uint64_t& dropped) {
  if (cluster) {
    const std::vector<TokenHash> bounds =
        storage::TokenExpiryBounds(store.Stats()->vocabulary_size, core::kExpiryStepTokens);
    for (std::size_t i = 0; i <= bounds.size(); ++i) {
      const TokenHash from = i > 0 ? bounds[i - 1] : 0;
      std::optional<TokenHash> until;
      if (i < bounds.size()) until = bounds[i];
      std::expected<storage::TokenExpiryStep, Error> result;
      if (!Timed(times, "expire",
                 [&] { return result = store.ExpireTokens(rule, from, 0, until); })) {
        return false;
      }
      dropped += result->dropped;
    }
    return true;
  }
  for (std::optional<TokenHash> from = 0; from;) {
    std::expected<storage::TokenExpiryStep, Error> result;
    if (!Timed(times, "expire",
               [&] { return result = store.ExpireTokens(rule, *from, core::kExpiryStepTokens); })) {
      return false;
    }
    dropped += result->dropped;
    from = result->next;
  }
  return true;
}

// The token expiry of the user layers, as ModelUpkeep::ExpireUserTokensAsync cuts it.
bool ExpireUsers(storage::RocksdbStore& store, const storage::TokenExpiryRule& rule, bool cluster,
                 Times& times, std::uint64_t& dropped) {
  if (cluster) {
    auto users = store.ListAllUsers();
    if (!users) {
      std::fprintf(stderr, "list users: %s\n", users.error().message.c_str());
      return false;
    }
    const std::vector<std::string> bounds =
        storage::UserExpiryBounds(*users, core::kExpiryStepTokens);
    for (std::size_t i = 0; i <= bounds.size(); ++i) {
      const std::string from = i > 0 ? bounds[i - 1] : "";
      std::optional<std::string> until;
      if (i < bounds.size()) until = bounds[i];
      std::expected<storage::UserTokenExpiryStep, Error> result;
      if (!Timed(times, "expire users",
                 [&] { return result = store.ExpireUserTokens(rule, from, 0, until); })) {
        return false;
      }
      dropped += result->dropped;
    }
    return true;
  }
  for (std::optional<std::string> from = ""; from;) {
    std::expected<storage::UserTokenExpiryStep, Error> result;
    if (!Timed(times, "expire users", [&] {
          return result = store.ExpireUserTokens(rule, *from, core::kExpiryStepTokens);
        })) {
      return false;
    }
    dropped += result->dropped;
    from = result->next;
  }
  return true;
}

// The users' distinct tokens in all.
std::uint64_t UserTokens(const storage::RocksdbStore& store) {
  std::uint64_t tokens = 0;
  auto users = store.ListAllUsers();
  if (!users) return tokens;
  for (const storage::UserSummary& user : *users) tokens += user.stats.vocabulary_size;
  return tokens;
}

int Run(std::size_t messages, const std::filesystem::path& parent, bool cluster) {
  std::string pattern = (parent / "nbspamd-expiry-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return 1;
  const std::filesystem::path folder = pattern;
  int status = 0;
  {
    auto opened = storage::RocksdbStore::Open((folder / "model").string());
    if (!opened) {
      std::fprintf(stderr, "open: %s\n", opened.error().message.c_str());
      return 1;
    }
    storage::RocksdbStore& store = **opened;

    // A day of mail, in groups as the writer writes them.
    std::mt19937_64 random(20261127);
    std::uint64_t next_new = 0;
    const auto learn_start = Clock::now();
    for (std::size_t first = 0; first < messages; first += kGroup) {
      std::vector<model::Delta> deltas;
      model::ModelStats stats = *store.Stats();
      for (std::size_t m = first; m < std::min(messages, first + kGroup); ++m) {
        const std::int64_t learned_at =
            static_cast<std::int64_t>(m) * kDay / static_cast<std::int64_t>(messages);
        std::string id = "m";  // Not "m" + ...: GCC 12 warns wrongly (-Wrestrict).
        id += std::to_string(m);
        const char* label = m % 3 == 0 ? "spam" : "ham";
        const TokenBag bag = Message(random, next_new);
        model::LearnPlan plan =
            model::PlanLearn(id, label, bag, std::nullopt, stats, {"bench", learned_at});
        if (m % kUserShare == 0) {
          std::string user = "user";
          user += std::to_string(m / kUserShare % kUsers);
          (void)model::AddUserLearn(plan.delta, user, id, label, bag, std::nullopt, stats,
                                    {"bench", learned_at});
        }
        deltas.push_back(std::move(plan.delta));
      }
      auto applied = store.ApplyBatch(deltas);
      if (!applied) {
        std::fprintf(stderr, "learn: %s\n", applied.error().message.c_str());
        return 1;
      }
    }
    const double learn_s = std::chrono::duration<double>(Clock::now() - learn_start).count();
    const std::uint64_t vocabulary = store.Stats()->vocabulary_size;
    const std::uint64_t user_tokens = UserTokens(store);
    std::printf(
        "learned %zu messages in %.1f s: %llu distinct tokens; %zu of them also into %zu users' "
        "layers: %llu user tokens; %s steps\n",
        messages, learn_s, static_cast<unsigned long long>(vocabulary),
        (messages + kUserShare - 1) / kUserShare, kUsers,
        static_cast<unsigned long long>(user_tokens), cluster ? "a cluster's" : "standalone");

    // The pass: the ledger retention, global then users', then the token expiry of the words
    // seen once, global then users', in the daemon's steps.
    const storage::TokenExpiryRule rule{.seen_before = kDay + 1, .max_count = 1};
    Times retire, retire_users, expire, expire_users;
    std::uint64_t retired = 0, retired_users = 0, dropped = 0, dropped_users = 0;
    if (!Retire(store, false, cluster, retire, retired) ||
        !Retire(store, true, cluster, retire_users, retired_users) ||
        !ExpireGlobal(store, rule, cluster, expire, dropped) ||
        !ExpireUsers(store, rule, cluster, expire_users, dropped_users)) {
      return 1;
    }
    Report("retire", retired, "records", retire);
    Report("retire users", retired_users, "records", retire_users);
    Report("expire", dropped, "tokens dropped", expire);
    Report("expire users", dropped_users, "tokens dropped", expire_users);
    const double pass_s =
        (retire.Total() + retire_users.Total() + expire.Total() + expire_users.Total()) / 1000;
    std::printf(
        "a day of mail at %zu messages: its pass takes %.1f s, %.3f%% of the day; "
        "learning it took %.1f s\n",
        messages, pass_s, 100 * pass_s / kDay, learn_s);
    if (store.Stats()->vocabulary_size != vocabulary - dropped) status = 1;
    if (UserTokens(store) != user_tokens - dropped_users) status = 1;
    if (status != 0) std::fprintf(stderr, "the counts do not add up after the pass\n");
  }
  std::filesystem::remove_all(folder);
  return status;
}

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) {
  std::size_t messages = 100'000;
  std::filesystem::path parent = "/tmp";
  bool cluster = false;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--cluster") {
      cluster = true;
    } else if (positional == 0) {
      messages = std::stoul(arg);
      ++positional;
    } else if (positional == 1) {
      parent = arg;
      ++positional;
    } else {
      std::fprintf(stderr, "usage: expiry_steps_benchmark [messages] [folder] [--cluster]\n");
      return 2;
    }
  }
  return nbspamd::bench::Run(messages, parent, cluster);
}
