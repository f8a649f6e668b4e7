// A year of mail in simulated time: replays a labelled stream of messages in arrival order
// through a SpamFilter on a RocksdbStore, spread evenly over DAYS simulated days on the filter's
// clock (no sleeping), with full feedback (each message is classified, its score recorded, then
// trained with its true label), and one pass of the model expiry (core/model_expiry.h) at the end
// of every simulated day. bench/expiry/run drives it, one process per policy.
//
//   expiry_year_of_mail --manifest FILE --dir DIR [--policy NAME] [--days 365]
//       [--retention-days N] [--token-days N] [--max-count N] [--keep-weight W]
//       [--keep-ham 0|1] [--cap N] [--min-messages N] [--scores FILE]
//
// --manifest lists the messages (bench/expiry/mail_manifest.h); DIR must not exist (the model
// folder is created there and left for the caller to remove). The expiry flags are the daemon's
// settings ledger_retention_days, token_expiry_days, token_expiry_max_count, token_keep_weight,
// token_keep_ham (off unless --keep-ham 1), token_cap and token_expiry_min_messages
// (--min-messages; 0 here unless given, though the daemon's default is 20,000) (docs/CONFIG.md);
// all zero (the default) is the unbounded model, never swept.
//
// Prints a CSV row at the end of each simulated day, after its pass:
//   day,policy,messages,db_bytes,sst_bytes,wal_bytes,memtable_bytes,rss_bytes,vocabulary,
//   ledger_live,retired,dropped,pass_ms,cap_met
// (messages learned so far; db_bytes the files below DIR, of which sst_bytes are table files and
// wal_bytes write-ahead logs; memtable_bytes the data not flushed to tables yet, all three
// RocksDB's own figures as /metrics has them; rss_bytes this process's resident set;
// vocabulary |V|; ledger_live the ledger records not retired; retired and dropped the expiry's
// totals; pass_ms the day's pass). --scores writes one line per message:
//   day,spam,score,verdict     (score empty when there was none, e.g. before both classes)
// for bench/expiry/year.py, which computes the accuracy with bench/accuracy/metrics.py. Last, once
// the model is closed, compacts the folder fully and prints compacted_db_bytes=N to stderr: the
// size of the live data alone (bench/expiry/compact_folder.h).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/expiry/compact_folder.h"
#include "bench/expiry/mail_manifest.h"
#include "bench/expiry/process_figures.h"
#include "core/model_expiry.h"
#include "core/spam_filter.h"
#include "model/verdict.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::bench {
namespace {

constexpr std::int64_t kDay = 24 * 3600;
constexpr std::int64_t kStart = 19'723 * kDay;  // Simulated day 0: 2024-01-01T00:00:00Z.
// The sweep's own timer never fires: the replay runs each pass itself.
constexpr std::chrono::hours kNever(24 * 365 * 10);

struct Args {
  std::string manifest;
  std::string dir;
  std::string policy = "unbounded";
  std::int64_t days = 365;
  unsigned retention_days = 0;
  unsigned token_days = 0;
  std::uint64_t max_count = 1;
  double keep_weight = 0;
  bool keep_ham = false;
  std::uint64_t cap = 0;
  std::uint64_t min_messages = 0;
  std::string scores;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: expiry_year_of_mail --manifest FILE --dir DIR [--policy NAME] "
               "[--days N] [--retention-days N] [--token-days N] [--max-count N] "
               "[--keep-weight W] [--keep-ham 0|1] [--cap N] [--min-messages N] "
               "[--scores FILE]\n",
               why);
  std::exit(2);
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) Usage("a flag without its value");
    const std::string value = argv[++i];
    if (flag == "--manifest") {
      args.manifest = value;
    } else if (flag == "--dir") {
      args.dir = value;
    } else if (flag == "--policy") {
      args.policy = value;
    } else if (flag == "--days") {
      args.days = std::stoll(value);
    } else if (flag == "--retention-days") {
      args.retention_days = static_cast<unsigned>(std::stoul(value));
    } else if (flag == "--token-days") {
      args.token_days = static_cast<unsigned>(std::stoul(value));
    } else if (flag == "--max-count") {
      args.max_count = std::stoull(value);
    } else if (flag == "--keep-weight") {
      args.keep_weight = std::stod(value);
    } else if (flag == "--keep-ham") {
      if (value != "0" && value != "1") Usage("--keep-ham is 0 or 1");
      args.keep_ham = value == "1";
    } else if (flag == "--cap") {
      args.cap = std::stoull(value);
    } else if (flag == "--min-messages") {
      args.min_messages = std::stoull(value);
    } else if (flag == "--scores") {
      args.scores = value;
    } else {
      Usage("an unknown flag");
    }
  }
  if (args.manifest.empty() || args.dir.empty()) Usage("--manifest and --dir are required");
  if (args.days <= 0) Usage("--days must be positive");
  if (std::filesystem::exists(args.dir)) Usage("--dir must not exist");
  return args;
}

// The replay: the filter, its clock and the figures the rows print.
class Replay {
 public:
  explicit Replay(const Args& args) : args_(args) {}

  std::expected<void, Error> Run() {
    auto entries = ReadManifest(args_.manifest);
    if (!entries) return std::unexpected(entries.error());
    auto store = storage::RocksdbStore::Open(args_.dir);
    if (!store) return std::unexpected(store.error());
    core::SpamFilterOptions options;  // The daemon's defaults, on the simulated clock.
    options.clock = [this] { return now_.load(); };
    core::SpamFilter filter(std::move(*store), options);
    const core::ExpiryPolicy policy{
        .ledger_retention = std::chrono::days(args_.retention_days),
        .token_age = std::chrono::days(args_.token_days),
        .token_max_count = args_.max_count,
        .token_min_messages = args_.min_messages,
        .keep_weight = args_.keep_weight,
        .keep_ham = args_.keep_ham,
        .token_cap = args_.cap,
        .alpha = options.alpha,
    };
    std::optional<core::ModelExpirySweep> sweep;
    if (policy.enabled()) sweep.emplace(filter, policy, kNever);

    std::FILE* scores = nullptr;
    if (!args_.scores.empty()) {
      scores = std::fopen(args_.scores.c_str(), "w");
      if (scores == nullptr)
        return MakeError(ErrorCode::kInternal, args_.scores + ": cannot write");
      std::fputs("day,spam,score,verdict\n", scores);
    }
    std::printf(
        "day,policy,messages,db_bytes,sst_bytes,wal_bytes,memtable_bytes,rss_bytes,vocabulary,"
        "ledger_live,retired,dropped,pass_ms,cap_met\n");

    const auto count = static_cast<std::int64_t>(entries->size());
    const std::int64_t span = args_.days * kDay;
    std::int64_t day = 0;
    std::expected<void, Error> result;
    for (std::int64_t i = 0; i < count && result; ++i) {
      const std::int64_t at = i * span / count;  // Evenly spread, in arrival order.
      for (; day < at / kDay && result; ++day) result = EndDay(filter, sweep, day);
      if (!result) break;
      now_ = kStart + at;
      const ManifestEntry& entry = (*entries)[static_cast<std::size_t>(i)];
      char id[32];
      std::snprintf(id, sizeof id, "m%lld", static_cast<long long>(i));
      result = Feed(filter, entry, id, day, scores);
    }
    for (; day < args_.days && result; ++day) result = EndDay(filter, sweep, day);
    if (scores != nullptr) std::fclose(scores);
    sweep.reset();
    filter.StopTraining();
    if (failures_ > 0) std::fprintf(stderr, "%llu messages failed\n", failures_);
    return result;
  }

 private:
  // Classifies the message, records its score, then trains it with its true label.
  std::expected<void, Error> Feed(core::SpamFilter& filter, const ManifestEntry& entry,
                                  const std::string& id, std::int64_t day, std::FILE* scores) {
    auto message = ReadMessage(entry.path);
    if (!message) return std::unexpected(message.error());
    std::optional<double> score;
    std::string_view verdict = "unsure";
    if (auto outcome = filter.Classify(*message, 0, id); outcome) {
      score = outcome->result.score;
      verdict = model::VerdictName(outcome->result.verdict);
    }
    if (scores != nullptr) {
      std::fprintf(scores, "%lld,%d,", static_cast<long long>(day), entry.spam ? 1 : 0);
      if (score) std::fprintf(scores, "%.17g", *score);
      std::fprintf(scores, ",%.*s\n", static_cast<int>(verdict.size()), verdict.data());
    }
    auto trained = filter.Train(*message, entry.spam ? "spam" : "ham", id);
    if (trained) {
      if (trained->status == model::LearnStatus::kLearned) ++learned_;
    } else {
      // An empty or unreadable message is skipped, as the daemon would refuse it.
      if (++failures_ <= 5) {
        std::fprintf(stderr, "%s: %s\n", entry.path.c_str(), trained.error().message.c_str());
      }
    }
    return {};
  }

  // The end of simulated day `day`: the day's pass on the next midnight, then its row.
  std::expected<void, Error> EndDay(core::SpamFilter& filter,
                                    std::optional<core::ModelExpirySweep>& sweep,
                                    std::int64_t day) {
    now_ = kStart + (day + 1) * kDay;
    double pass_ms = 0;
    bool cap_met = true;
    if (sweep) {
      const auto begin = std::chrono::steady_clock::now();
      auto pass = sweep->SweepOnce();
      pass_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
                    .count();
      if (!pass) return std::unexpected(pass.error());
      cap_met = pass->cap_met;
    }
    auto bytes = FolderBytes(args_.dir);
    if (!bytes) return std::unexpected(bytes.error());
    const core::ExpiryFigures expiry = filter.Upkeep().Expiry();
    double sst = 0, wal = 0, memtables = 0;  // What the folder's bytes are made of.
    for (const storage::StorageProperty& property : filter.StorageProperties()) {
      if (property.name == "nbspamd_storage_sst_bytes") sst = property.value;
      if (property.name == "nbspamd_storage_wal_bytes") wal = property.value;
      if (property.name == "nbspamd_storage_memtable_bytes") memtables = property.value;
    }
    std::printf("%lld,%s,%llu,%llu,%.0f,%.0f,%.0f,%llu,%llu,%llu,%llu,%llu,%.1f,%d\n",
                static_cast<long long>(day), args_.policy.c_str(),
                static_cast<unsigned long long>(learned_), static_cast<unsigned long long>(*bytes),
                sst, wal, memtables, static_cast<unsigned long long>(ResidentBytes()),
                static_cast<unsigned long long>(filter.Stats()->vocabulary_size),
                static_cast<unsigned long long>(learned_ - expiry.retired_records),
                static_cast<unsigned long long>(expiry.retired_records),
                static_cast<unsigned long long>(expiry.dropped_tokens), pass_ms, cap_met ? 1 : 0);
    std::fflush(stdout);
    return {};
  }

  const Args& args_;
  std::atomic<std::int64_t> now_ = kStart;  // The filter's clock, read on the writer's thread.
  std::uint64_t learned_ = 0;
  unsigned long long failures_ = 0;
};

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) {
  const nbspamd::bench::Args args = nbspamd::bench::ParseArgs(argc, argv);
  nbspamd::bench::Replay replay(args);
  if (auto ran = replay.Run(); !ran) {
    std::fprintf(stderr, "expiry_year_of_mail: %s\n", ran.error().message.c_str());
    return 1;
  }
  // The model is closed: what the folder would shrink to once compaction reaches every record.
  auto compacted = nbspamd::bench::CompactFolder(args.dir);
  auto bytes =
      compacted ? nbspamd::bench::FolderBytes(args.dir)
                : std::expected<std::uint64_t, nbspamd::Error>(std::unexpected(compacted.error()));
  if (!bytes) {
    std::fprintf(stderr, "expiry_year_of_mail: %s\n", bytes.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "compacted_db_bytes=%llu\n", static_cast<unsigned long long>(*bytes));
  return 0;
}
