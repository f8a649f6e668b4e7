// What only the durable backend promises: everything survives a reopen, and a folder of another
// schema is refused.
#include "storage/rocksdb_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <span>
#include <thread>

#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/encoding.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_database.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"
#include "tests/support/token_bags.h"

namespace nbspamd::storage {
namespace {

using test_support::BagOf;

// `prefix` followed by `i` (a helper: GCC 12 warns wrongly about "literal" + std::to_string).
using test_support::Numbered;

void Learn(Store& store, const std::string& id, const std::string& label, const TokenBag& bag) {
  const auto plan = model::PlanLearn(id, label, bag, *store.FindLearned(id), *store.Stats());
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

// User layers: what the durable backend adds to the Store contract.

void UserLearn(Store& store, const std::string& user, const std::string& id,
               const std::string& label, const TokenBag& bag, bool global = false) {
  const auto stats = store.Stats();
  model::LearnPlan plan;
  if (global) plan = model::PlanLearn(id, label, bag, *store.FindLearned(id), *stats);
  (void)model::AddUserLearn(plan.delta, user, id, label, bag, *store.FindUserLearned(user, id),
                            *stats);
  const auto applied = store.Apply(plan.delta);
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
}

// Options for opening a store's folder behind its back: its table files loaded by as many threads
// as the store's own open uses.
rocksdb::Options RawOptions() {
  rocksdb::Options options;
  options.max_file_opening_threads = kFileOpeningThreads;
  return options;
}

// Every key of the users family, read raw.
std::vector<std::string> RawUserKeys(const std::string& path) {
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  EXPECT_TRUE(rocksdb::DB::OpenForReadOnly(RawOptions(), path, families, &handles, &raw).ok());
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "users") continue;
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator({}, handles[i]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
  }
  for (auto* handle : handles) raw->DestroyColumnFamilyHandle(handle);
  delete raw;
  return keys;
}

// Words 1..n, each once.
TokenBag Words(std::uint64_t first, std::uint64_t n) {
  TokenBag bag;
  for (std::uint64_t t = first; t < first + n; ++t) bag.entries.push_back({t, 1});
  return bag;
}

double PropertyOf(const Store& store, std::string_view name) {
  for (const StorageProperty& property : store.Properties()) {
    if (property.name == name) return property.value;
  }
  ADD_FAILURE() << "no property " << name;
  return -1;
}

// What the model expiry does after a pass: the write-ahead logs that held its writes go, and
// the records stay, in memory and after a reopen.
TEST(RocksdbStoreTest, FlushingTheMemoryTablesLetsTheLogsGoAndKeepsEveryRecord) {
  TempDir dir;
  model::ModelStats before;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    for (std::uint64_t i = 0; i < 200; ++i) {
      Learn(**store, Numbered("m", i), i % 2 == 0 ? "spam" : "ham", Words(i * 10, 50));
    }
    const double logged = PropertyOf(**store, "nbspamd_storage_wal_bytes");
    ASSERT_GT(logged, 0);
    ASSERT_EQ(PropertyOf(**store, "nbspamd_storage_live_sst_bytes"), 0);
    before = *(*store)->Stats();
    ASSERT_TRUE((*store)->FlushMemoryTables().has_value());
    EXPECT_LT(PropertyOf(**store, "nbspamd_storage_wal_bytes"), logged / 10);
    EXPECT_GT(PropertyOf(**store, "nbspamd_storage_live_sst_bytes"), 0);
    EXPECT_EQ(*(*store)->Stats(), before);
  }
  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  EXPECT_EQ(*(*reopened)->Stats(), before);
  const model::Snapshot snapshot = (*reopened)->Read(Words(0, 2100).entries);
  std::uint64_t counted = 0;
  for (std::size_t i = 0; i < 2100; ++i) {
    for (const std::uint64_t count : snapshot.CountsOf(i)) counted += count;
  }
  EXPECT_EQ(counted, 200u * 50u);
}

TEST(RocksdbStoreTest, AFolderWithoutUserLayersKeepsItsFamilies) {
  TempDir dir;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    Learn(**store, "a", "spam", BagOf({{1, 2}}));
    EXPECT_FALSE((*store)->ReadUser("alice", *(*store)->Stats(), {})->has_value());
  }
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), dir.Join("model"), &names).ok());
  EXPECT_EQ(names.size(), 4u) << "the users family is created with the first layer";
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    UserLearn(**store, "alice", "m1", "ham", BagOf({{1, 1}}));
  }
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), dir.Join("model"), &names).ok());
  EXPECT_EQ(names.size(), 5u);
}

TEST(RocksdbStoreTest, ReopenGivesTheSameUserLayers) {
  TempDir dir;
  const TokenBag words = Words(1, 40);
  std::map<std::string, std::optional<model::Snapshot>> before;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value());
    UserLearn(**store, "alice", "m1", "spam", Words(1, 10), true);
    UserLearn(**store, "alice", "m2", "ham", Words(5, 10));
    UserLearn(**store, "bob", "m1", "phishing", Words(20, 5));
    UserLearn(**store, "carol", "m1", "ham", Words(30, 5));
    UserLearn(**store, "alice", "m1", "ham", Words(1, 10));  // Relearned in alice's layer only.
    ASSERT_TRUE((*store)->DeleteUser("carol").has_value());
    for (const char* user : {"alice", "bob", "carol"}) {
      before[user] = *(*store)->ReadUser(user, *(*store)->Stats(), words.entries);
    }
    EXPECT_EQ((*store)->UserFigures().users, 2u);
  }
  auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ((*store)->UserFigures().users, 2u);
  for (const char* user : {"alice", "bob", "carol"}) {
    const auto after = *(*store)->ReadUser(user, *(*store)->Stats(), words.entries);
    ASSERT_EQ(after.has_value(), before[user].has_value()) << user;
    if (!after) continue;
    EXPECT_EQ(*after->stats, *before[user]->stats) << user;
    EXPECT_EQ(after->counts, before[user]->counts) << user;
  }
  EXPECT_EQ((*(*store)->FindUserLearned("alice", "m1"))->label, "ham");
  EXPECT_EQ((*(*store)->FindLearned("m1"))->label, "spam");
}

TEST(RocksdbStoreTest, DeleteUserLeavesNoKeyOfTheUser) {
  TempDir dir;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    UserLearn(**store, "alice", "m1", "spam", Words(1, 10), true);
    UserLearn(**store, "alice", "m2", "ham", Words(5, 10));
    UserLearn(**store, "alice2", "m1", "ham", Words(5, 3));
    UserLearn(**store, "alic", "m1", "ham", Words(5, 2));
    const std::uint64_t cached = (*store)->UserFigures().cached_layers;
    const std::uint64_t bytes = (*store)->UserFigures().cache_bytes;
    ASSERT_TRUE((*store)->DeleteUser("alice").has_value());
    EXPECT_EQ((*store)->UserFigures().cached_layers, cached - 1) << "alice's layer stays in memory";
    EXPECT_LT((*store)->UserFigures().cache_bytes, bytes);
    EXPECT_EQ((*store)->UserFigures().users, 2u);
  }
  const auto keys = RawUserKeys(dir.Join("model"));
  const auto of = [&](const std::string& user) {
    return std::count_if(keys.begin(), keys.end(), [&](const std::string& key) {
      return key.compare(0, user.size() + 1, UserKeyPrefix(user)) == 0;
    });
  };
  EXPECT_EQ(of("alice"), 0);
  // Stats, tokens, one ledger record and its source entry each.
  EXPECT_EQ(of("alice2"), 1 + 3 + 1 + 1);
  EXPECT_EQ(of("alic"), 1 + 2 + 1 + 1);
  EXPECT_EQ(keys.size(), std::size_t{6 + 5});
  // The global model keeps what alice's feedback taught it.
  auto store = RocksdbStore::Open(dir.Join("model"));
  EXPECT_EQ((*(*store)->FindLearned("m1"))->label, "spam");
}

TEST(RocksdbStoreTest, UserLayerCacheStaysWithinItsBudgetAndReloadsExactly) {
  TempDir dir;
  RocksdbStoreOptions options;
  options.user_cache_bytes = 16 << 10;  // A few layers of 100 tokens.
  auto store = RocksdbStore::Open(dir.Join("model"), options);
  ASSERT_TRUE(store.has_value());
  const TokenBag words = Words(1, 300);
  std::vector<std::optional<model::Snapshot>> first;
  for (std::uint64_t u = 0; u < 20; ++u) {
    UserLearn(**store, Numbered("user", u), "m", u % 2 ? "spam" : "ham", Words(u * 10, 100));
  }
  for (std::uint64_t u = 0; u < 20; ++u) {
    first.push_back(*(*store)->ReadUser(Numbered("user", u), *(*store)->Stats(), words.entries));
    EXPECT_LE((*store)->UserFigures().cache_bytes, options.user_cache_bytes);
  }
  const UserLayerFigures figures = (*store)->UserFigures();
  EXPECT_EQ(figures.users, 20u);
  EXPECT_LT(figures.cached_layers, 20u);
  EXPECT_GT(figures.cache_misses, 0u);
  for (std::uint64_t u = 0; u < 20; ++u) {  // Evicted ones are read again from disk.
    const auto again = *(*store)->ReadUser(Numbered("user", u), *(*store)->Stats(), words.entries);
    ASSERT_TRUE(again.has_value() && first[u].has_value());
    EXPECT_EQ(*again->stats, *first[u]->stats);
    EXPECT_EQ(again->counts, first[u]->counts);
  }
  EXPECT_GT((*store)->UserFigures().cache_misses, figures.cache_misses);
  // A hot user is served from memory: no miss.
  const std::uint64_t misses = (*store)->UserFigures().cache_misses;
  for (int i = 0; i < 10; ++i)
    (void)(*store)->ReadUser("user19", *(*store)->Stats(), words.entries);
  EXPECT_EQ((*store)->UserFigures().cache_misses, misses);
}

// Readers read layers while the writer changes them and the small cache evicts and reloads them:
// every snapshot is of one state of its layer (its counts sum to its stats), and when the writer
// is done, memory holds exactly what the disk does (no reader cached a layer older than one the
// writer published).
TEST(RocksdbStoreTest, UserLayersReadWhileWrittenAreNeverTornOrLeftStale) {
  TempDir dir;
  RocksdbStoreOptions options;
  options.user_cache_bytes = 2 << 10;  // Two layers: loads and evictions all the time.
  auto opened = RocksdbStore::Open(dir.Join("model"), options);
  ASSERT_TRUE(opened.has_value());
  RocksdbStore& store = **opened;
  constexpr std::uint64_t kUsers = 5;
  const auto base = [](std::uint64_t u) { return Words(u * 1000 + 1, 5); };
  const auto message = [](std::uint64_t u, std::uint64_t r) {
    return BagOf({{u * 1000 + 1, 2}, {u * 1000 + 10 + r % 20, 1}});
  };
  TokenBag all;
  for (std::uint64_t u = 0; u < kUsers; ++u) {
    for (std::uint64_t t = 0; t < 40; ++t) all.entries.push_back({u * 1000 + t, 1});
    UserLearn(store, Numbered("user", u), "base", "ham", base(u));
  }
  const auto bag_of = [&](std::uint64_t u) {
    return std::span<const BagEntry>(all.entries).subspan(u * 40, 40);
  };

  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> reads{0}, torn{0}, failed{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 random(t);
      while (!done.load()) {
        const std::uint64_t u = random() % kUsers;
        const auto global = store.Stats();
        auto snapshot = store.ReadUser(Numbered("user", u), *global, bag_of(u));
        if (!snapshot || !snapshot->has_value()) {
          ++failed;
          continue;
        }
        const model::Snapshot& layer = **snapshot;
        std::vector<std::uint64_t> sums(2, 0);
        std::uint64_t distinct = 0;
        for (std::size_t i = 0; i < 40; ++i) {
          sums[0] += layer.CountsOf(i)[0];
          sums[1] += layer.CountsOf(i)[1];
          distinct += layer.CountsOf(i)[0] + layer.CountsOf(i)[1] > 0 ? 1 : 0;
        }
        if (sums[0] != layer.stats->classes[0].tokens ||
            sums[1] != layer.stats->classes[1].tokens || distinct != layer.stats->vocabulary_size) {
          ++torn;
        }
        ++reads;
      }
    });
  }
  // Each round of writes waits for a read that began after the last one, so the reads overlap
  // the writes however the threads are scheduled (a loaded machine may otherwise finish every
  // write before a reader runs).
  const auto await_a_read = [&] {
    const std::uint64_t before = reads.load() + failed.load();
    while (reads.load() + failed.load() <= before + 1) std::this_thread::yield();
  };
  constexpr std::uint64_t kRounds = 20;
  for (std::uint64_t r = 0; r < kRounds; ++r) {
    await_a_read();
    for (std::uint64_t u = 0; u < kUsers; ++u) {
      const std::string user = Numbered("user", u);
      UserLearn(store, user, Numbered("m", r), r % 2 ? "spam" : "ham", message(u, r));
      if (r % 3 != 2) {
        model::Delta forget;
        model::AddUserForget(forget, user, Numbered("m", r),
                             **store.FindUserLearned(user, Numbered("m", r)), *store.Stats());
        ASSERT_TRUE(store.Apply(forget).has_value());
      }
    }
  }
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(torn.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  EXPECT_GT(store.UserFigures().cache_misses, kUsers);

  std::vector<std::optional<model::Snapshot>> in_memory;
  for (std::uint64_t u = 0; u < kUsers; ++u) {
    in_memory.push_back(*store.ReadUser(Numbered("user", u), *store.Stats(), bag_of(u)));
  }
  opened->reset();
  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value());
  for (std::uint64_t u = 0; u < kUsers; ++u) {
    const auto on_disk =
        *(*reopened)->ReadUser(Numbered("user", u), *(*reopened)->Stats(), bag_of(u));
    ASSERT_TRUE(on_disk.has_value() && in_memory[u].has_value());
    EXPECT_EQ(*on_disk->stats, *in_memory[u]->stats) << u;
    EXPECT_EQ(on_disk->counts, in_memory[u]->counts) << u;
    // base, and every third round's message kept: rounds 2, 5, ..., 17.
    EXPECT_EQ(on_disk->stats->TotalDocuments(), 1u + kRounds / 3) << u;
  }
}

TEST(RocksdbStoreTest, ReopenGivesTheSameModel) {
  TempDir dir;
  const TokenBag bag = BagOf({{1, 2}, {2, 1}, {3, 5}});
  model::Snapshot before;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    Learn(**store, "a", "spam", BagOf({{1, 2}, {2, 1}}));
    Learn(**store, "b", "ham", BagOf({{2, 1}, {3, 5}}));
    Learn(**store, "c", "newsletter", BagOf({{3, 1}}));
    auto plan = model::PlanForget("a", *(*(*store)->FindLearned("a")), *(*store)->Stats());
    plan.stream_position = "42-0";
    ASSERT_TRUE((*store)->Apply(plan).has_value());
    Learn(**store, "a", "spam", BagOf({{1, 2}}));
    before = (*store)->Read(bag.entries);
  }
  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  const model::Snapshot after = (*reopened)->Read(bag.entries);
  EXPECT_EQ(*after.stats, *before.stats);
  EXPECT_EQ(after.counts, before.counts);
  EXPECT_EQ((*reopened)->StreamPosition(), "42-0");
  const auto learned = (*reopened)->FindLearned("b");
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  EXPECT_EQ(**learned, (model::LedgerEntry{"ham", {{2, 1}, {3, 5}}, {}, std::nullopt}));
  EXPECT_EQ(after.stats->classes.size(), 3u);
}

// Opens the folder's column families raw (meta, tokens, ledger, sources) for `change`.
void ChangeRaw(
    const std::string& path,
    const std::function<void(rocksdb::DB&, std::vector<rocksdb::ColumnFamilyHandle*>&)>& change) {
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, {}}, {"tokens", {}}, {"ledger", {}}, {"sources", {}}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ASSERT_TRUE(rocksdb::DB::Open(RawOptions(), path, families, &handles, &raw).ok());
  change(*raw, handles);
  for (auto* handle : handles) raw->DestroyColumnFamilyHandle(handle);
  delete raw;
}

std::string ReadRaw(const std::string& path, const char* key) {
  std::string value;
  ChangeRaw(path, [&](rocksdb::DB& db, std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    if (!db.Get({}, handles[0], key, &value).ok()) value = "<absent>";
  });
  return value;
}

void LearnScored(Store& store, const std::string& id, const std::string& label, const TokenBag& bag,
                 double score) {
  const auto plan = model::PlanLearn(id, label, bag, *store.FindLearned(id), *store.Stats(), {},
                                     model::HeldOutScore{model::kScoreScale, score});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

// 25 spam and 25 ham records with held-out scores spread over the range.
model::FeedbackHistogram LearnFeedback(Store& store) {
  model::FeedbackHistogram expected;
  for (int i = 0; i < 25; ++i) {
    const double spam_score = -0.2 + 0.05 * i, ham_score = -0.9 + 0.04 * i;
    LearnScored(store, Numbered("s", i), "spam", BagOf({{100u + i, 1}}), spam_score);
    LearnScored(store, Numbered("h", i), "ham", BagOf({{200u + i, 1}}), ham_score);
    expected.Add({model::CalibrationBin(spam_score), true});
    expected.Add({model::CalibrationBin(ham_score), false});
  }
  return expected;
}

TEST(RocksdbStoreTest, TheCalibrationSurvivesAReopen) {
  TempDir dir;
  model::FeedbackHistogram expected;
  std::vector<double> fitted;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    expected = LearnFeedback(**store);
    ASSERT_EQ(*(*store)->Feedback(), expected);
    ASSERT_TRUE(model::Calibration(*(*store)->Feedback()).ready());
    fitted = model::Calibration(*(*store)->Feedback()).fitted();
  }
  EXPECT_EQ(ReadRaw(dir.Join("model"), "calibration"), EncodeFeedbackHistogram(expected));
  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  EXPECT_EQ(*(*reopened)->Feedback(), expected);
  EXPECT_EQ(model::Calibration(*(*reopened)->Feedback()).fitted(), fitted)
      << "bit-identical after a reopen";
}

TEST(RocksdbStoreTest, AMissingOrOtherLayoutCalibrationIsRebuiltFromTheLedger) {
  TempDir dir;
  model::FeedbackHistogram expected;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    expected = LearnFeedback(**store);
  }
  // Missing.
  ChangeRaw(dir.Join("model"), [](rocksdb::DB& db, auto& handles) {
    ASSERT_TRUE(db.Delete({}, handles[0], "calibration").ok());
  });
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    EXPECT_EQ(*(*store)->Feedback(), expected);
  }
  EXPECT_EQ(ReadRaw(dir.Join("model"), "calibration"), EncodeFeedbackHistogram(expected))
      << "the rebuilt record is stored";
  // Counted in another binning (the constants of model/calibration.h changed).
  model::FeedbackHistogram other;
  other.layout.bins = 3;
  other.spam = {5, 0, 0};
  other.ham = {0, 0, 9};
  ChangeRaw(dir.Join("model"), [&](rocksdb::DB& db, auto& handles) {
    ASSERT_TRUE(db.Put({}, handles[0], "calibration", EncodeFeedbackHistogram(other)).ok());
  });
  auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ(*(*store)->Feedback(), expected);
  // A corrupt record is an error, as a corrupt stats record is (nbspamd check --repair).
  store->reset();
  ChangeRaw(dir.Join("model"), [](rocksdb::DB& db, auto& handles) {
    ASSERT_TRUE(db.Put({}, handles[0], "calibration", "\x01").ok());
  });
  const auto corrupt = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(corrupt.has_value());
  EXPECT_EQ(corrupt.error().code, ErrorCode::kDataLoss);
}

TEST(RocksdbStoreTest, ASchemaThreeFolderIsUpgradedWithoutTheCalibrationOfAnAutolearnToken) {
  TempDir dir;
  model::FeedbackHistogram expected;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    expected = LearnFeedback(**store);
  }
  // What a schema 3 daemon left when a bearer token was named "autolearn": its record counted.
  const model::LedgerEntry by_token{
      "spam", {}, {"autolearn", 9}, model::HeldOutScore{model::kScoreScale, 0.5}};
  model::FeedbackHistogram counted = expected;
  counted.Add({model::CalibrationBin(0.5), true});
  ChangeRaw(dir.Join("model"), [&](rocksdb::DB& db, auto& handles) {
    ASSERT_TRUE(db.Put({}, handles[0], "schema_version", "3").ok());
    ASSERT_TRUE(db.Put({}, handles[0], "calibration", EncodeFeedbackHistogram(counted)).ok());
    ASSERT_TRUE(db.Put({}, handles[2], "t1", EncodeLedgerEntry(by_token)).ok());
  });
  auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ(*(*store)->Feedback(), expected);
  store->reset();
  EXPECT_EQ(ReadRaw(dir.Join("model"), "schema_version"), "7");
  EXPECT_EQ(ReadRaw(dir.Join("model"), "calibration"), EncodeFeedbackHistogram(expected));
}

TEST(RocksdbStoreTest, ASchemaTwoFolderIsUpgradedWithAnEmptyCalibration) {
  TempDir dir;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    Learn(**store, "a", "spam", BagOf({{1, 2}}));
    Learn(**store, "b", "ham", BagOf({{2, 1}}));
  }
  // What a schema 2 daemon leaves: version 2, no calibration record, records without scores.
  ChangeRaw(dir.Join("model"), [](rocksdb::DB& db, auto& handles) {
    ASSERT_TRUE(db.Put({}, handles[0], "schema_version", "2").ok());
    ASSERT_TRUE(db.Delete({}, handles[0], "calibration").ok());
  });
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    EXPECT_EQ(*(*store)->Feedback(), model::FeedbackHistogram{});
    EXPECT_EQ((*store)->Stats()->TotalDocuments(), 2u);
    EXPECT_FALSE((**(*store)->FindLearned("a")).held_out.has_value());
  }
  EXPECT_EQ(ReadRaw(dir.Join("model"), "schema_version"), "7");
  EXPECT_EQ(ReadRaw(dir.Join("model"), "calibration"), EncodeFeedbackHistogram({}));
}

TEST(RocksdbStoreTest, ABatchSurvivesAKillRightAfterItIsApplied) {
  TempDir dir;
  // The deltas of a learn, a relearn of it, a forget and two learns, planned one by one on an
  // in-memory store: it starts no threads, so the fork below copies a single-threaded process.
  std::vector<model::Delta> deltas;
  MemoryStore planner;
  {
    const auto plan_and_apply = [&](model::Delta delta) {
      ASSERT_TRUE(planner.Apply(delta).has_value());
      deltas.push_back(std::move(delta));
    };
    auto& store = planner;
    plan_and_apply(
        model::PlanLearn("a", "spam", BagOf({{1, 2}, {2, 1}}), std::nullopt, *store.Stats()).delta);
    plan_and_apply(model::PlanLearn("a", "ham", BagOf({{1, 2}, {2, 1}}), *store.FindLearned("a"),
                                    *store.Stats())
                       .delta);
    plan_and_apply(
        model::PlanLearn("b", "spam", BagOf({{3, 4}}), std::nullopt, *store.Stats()).delta);
    plan_and_apply(model::PlanForget("b", **store.FindLearned("b"), *store.Stats()));
    plan_and_apply(
        model::PlanLearn("c", "newsletter", BagOf({{2, 7}, {5, 1}}), std::nullopt, *store.Stats())
            .delta);
  }

  // A child applies the batch and is killed the moment ApplyBatch returns: no clean close.
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    auto store = RocksdbStore::Open(dir.Join("model"));
    if (!store) _exit(2);
    auto results = (*store)->ApplyBatch(deltas);
    if (!results) _exit(3);
    for (const auto& result : *results) {
      if (!result) _exit(4);
    }
    kill(getpid(), SIGKILL);
    _exit(5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto reopened = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  const TokenBag all = BagOf({{1, 1}, {2, 1}, {3, 1}, {5, 1}});
  const model::Snapshot after = (*reopened)->Read(all.entries);
  const model::Snapshot expected = planner.Read(all.entries);
  EXPECT_EQ(*after.stats, *expected.stats);
  EXPECT_EQ(after.counts, expected.counts);
  EXPECT_EQ(after.stats->vocabulary_size, 3u);
  EXPECT_EQ(**(*reopened)->FindLearned("a"),
            (model::LedgerEntry{"ham", {{1, 2}, {2, 1}}, {}, std::nullopt}));
  EXPECT_FALSE((*reopened)->FindLearned("b")->has_value());
  EXPECT_EQ((**(*reopened)->FindLearned("c")).label, "newsletter");
}

TEST(RocksdbStoreTest, OtherSchemaVersionIsAClearError) {
  TempDir dir;
  { ASSERT_TRUE(RocksdbStore::Open(dir.Join("model")).has_value()); }
  ChangeRaw(dir.Join("model"), [](rocksdb::DB& db, auto& handles) {
    ASSERT_TRUE(db.Put({}, handles[0], "schema_version", "999").ok());
  });
  const auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(store.error().message.find("schema version 999"), std::string::npos)
      << store.error().message;
}

TEST(RocksdbStoreTest, StatsThatDisagreeWithCountsAreRefused) {
  TempDir dir;
  {
    auto store = RocksdbStore::Open(dir.Join("model"));
    Learn(**store, "a", "spam", BagOf({{1, 2}}));
  }
  {
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"tokens", {}}, {"ledger", {}}, {"sources", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    ASSERT_TRUE(rocksdb::DB::Open(RawOptions(), dir.Join("model"), families, &handles, &raw).ok());
    ASSERT_TRUE(raw->Put({}, handles[1], EncodeTokenKey(99), EncodeTokenCounts({1})).ok());
    for (auto* handle : handles) raw->DestroyColumnFamilyHandle(handle);
    delete raw;
  }
  const auto store = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code, ErrorCode::kDataLoss);
}

TEST(RocksdbStoreTest, CreatesMissingParentFolders) {
  TempDir dir;
  auto store = RocksdbStore::Open(dir.Join("a/b/model"));
  ASSERT_TRUE(store.has_value()) << store.error().message;
  EXPECT_EQ((*store)->Stats()->classes.size(), 2u);
}

TEST(RocksdbStoreTest, UnwritableFolderIsAClearError) {
  TempDir dir;
  const std::string file = dir.Join("file");
  { std::ofstream(file) << "x"; }
  const auto store = RocksdbStore::Open(file + "/model");
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code, ErrorCode::kInternal);
  EXPECT_NE(store.error().message.find(file), std::string::npos) << store.error().message;
}

TEST(RocksdbStoreTest, SecondOpenOfTheSameFolderFails) {
  TempDir dir;
  auto first = RocksdbStore::Open(dir.Join("model"));
  ASSERT_TRUE(first.has_value());
  const auto second = RocksdbStore::Open(dir.Join("model"));
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kInternal);
  EXPECT_NE(second.error().message.find("lock"), std::string::npos) << second.error().message;
}

}  // namespace
}  // namespace nbspamd::storage
