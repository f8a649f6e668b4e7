// Dump and restore end to end over real RocksDB folders: storage::ExportFolder or
// RocksdbStore::Export into dump::DumpWriter, dump::ReadDump into storage::ModelImport.
#include "storage/model_transfer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "dump/dump_format.h"
#include "model/learning.h"
#include "model/user_layer.h"
#include "storage/model_check.h"
#include "storage/rocksdb_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/token_bags.h"

namespace nbspamd::dump {
namespace {

using storage::ImportMode;
using storage::RocksdbStore;
using test_support::BagOfWords;
using ::testing::HasSubstr;

constexpr char kAllWords[] = "send us your password review account cheap pills now";
// A user id with a space, a percent sign and a newline: percent-encoded in the dump.
const std::string kOddUser = "carol smith%\nx";

void Learn(storage::Store& store, const std::string& id, const std::string& label,
           const std::string& text) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value());
  const model::LearnPlan plan =
      model::PlanLearn(id, label, BagOfWords(text), *learned, *store.Stats(), {"admin", 7});
  ASSERT_TRUE(store.Apply(plan.delta).has_value());
}

void UserLearn(storage::Store& store, const std::string& user, const std::string& id,
               const std::string& label, const std::string& text) {
  model::Delta delta;
  (void)model::AddUserLearn(delta, user, id, label, BagOfWords(text),
                            *store.FindUserLearned(user, id), *store.Stats(), {"feedback", 9});
  const auto applied = store.Apply(delta);
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
}

void Forget(storage::Store& store, const std::string& id) {
  auto learned = store.FindLearned(id);
  ASSERT_TRUE(learned.has_value() && learned->has_value());
  ASSERT_TRUE(store.Apply(model::PlanForget(id, **learned, *store.Stats())).has_value());
}

std::string Fingerprint() { return TokenizerFingerprint({}); }

// The dump of the closed model in `path`.
std::string DumpOf(const std::string& path) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  DumpWriter writer(out, {0.1, Fingerprint()});
  auto exported = storage::ExportFolder(path, writer);
  EXPECT_TRUE(exported.has_value()) << exported.error().message;
  EXPECT_TRUE(writer.Finish().has_value());
  std::fclose(out);
  std::string dump(text, size);
  std::free(text);
  return dump;
}

// Restores `dump` into `path` with `mode`; the summary, or the error.
std::expected<storage::ImportSummary, Error> Restore(const std::string& path, ImportMode mode,
                                                     const std::string& dump,
                                                     std::string tokenizer = Fingerprint()) {
  auto import = storage::ModelImport::Begin(path, mode);
  if (!import) return std::unexpected(import.error());
  std::FILE* in = ::fmemopen(const_cast<char*>(dump.data()), dump.size(), "r");
  ReadDumpOptions options;
  options.tokenizer = std::move(tokenizer);
  auto read = ReadDump(in, options, **import);
  std::fclose(in);
  if (!read) return std::unexpected(read.error());
  return (*import)->Commit();
}

class ModelTransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = RocksdbStore::Open(Site("a"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    Learn(**store, "a1", "spam", "cheap pills now");
    Learn(**store, "a2", "spam", "cheap password now now");
    Learn(**store, "a3", "ham", "review your account");
    UserLearn(**store, "alice", "u1", "ham", "cheap pills review");
    UserLearn(**store, kOddUser, "u2", "spam", "send us now");
  }

  std::string Site(const std::string& name) const { return dir_.Join(name); }

  // A second site, b, with a model of its own.
  void MakeSiteB() {
    auto store = RocksdbStore::Open(Site("b"));
    ASSERT_TRUE(store.has_value()) << store.error().message;
    Learn(**store, "b1", "spam", "send us your password");
    Learn(**store, "b2", "ham", "review us now");
    UserLearn(**store, "alice", "v1", "spam", "pills now");
  }

  static void ExpectConsistent(const std::string& path) {
    auto report = storage::CheckModel(path);
    ASSERT_TRUE(report.has_value()) << report.error().message;
    EXPECT_TRUE(report->ok()) << ::testing::PrintToString(report->problems);
  }

  TempDir dir_;
};

TEST_F(ModelTransferTest, ARoundTripGivesTheSameModelAndTheSameDump) {
  const std::string dump = DumpOf(Site("a"));
  EXPECT_THAT(dump, HasSubstr("layer user carol%20smith%25%0ax\n"));
  auto restored = Restore(Site("copy"), ImportMode::kReplace, dump);
  ASSERT_TRUE(restored.has_value()) << restored.error().message;
  EXPECT_EQ(restored->layers, 3u);
  EXPECT_EQ(DumpOf(Site("copy")), dump);
  ExpectConsistent(Site("copy"));

  auto original = RocksdbStore::Open(Site("a"));
  auto copy = RocksdbStore::Open(Site("copy"));
  ASSERT_TRUE(original.has_value() && copy.has_value());
  EXPECT_EQ(*(*copy)->Stats(), *(*original)->Stats());
  const TokenBag bag = BagOfWords(kAllWords);
  EXPECT_EQ((*copy)->Read(bag.entries).counts, (*original)->Read(bag.entries).counts);
  for (const std::string& user : {std::string("alice"), kOddUser}) {
    EXPECT_EQ(**(*copy)->UserStats(user), **(*original)->UserStats(user)) << user;
    EXPECT_EQ((**(*copy)->ReadUser(user, *(*copy)->Stats(), bag.entries)).counts,
              (**(*original)->ReadUser(user, *(*original)->Stats(), bag.entries)).counts);
  }
  // A restored model has no ledger: its counts are base counts, which no forget takes.
  EXPECT_FALSE((*copy)->FindLearned("a1")->has_value());
}

TEST_F(ModelTransferTest, TheServingStoreDumpsWhatTheFolderHolds) {
  std::string online;
  {
    auto store = RocksdbStore::Open(Site("a"));
    ASSERT_TRUE(store.has_value());
    char* text = nullptr;
    std::size_t size = 0;
    std::FILE* out = ::open_memstream(&text, &size);
    DumpWriter writer(out, {0.1, Fingerprint()});
    ASSERT_TRUE((*store)->Export(writer).has_value());
    ASSERT_TRUE(writer.Finish().has_value());
    std::fclose(out);
    online.assign(text, size);
    std::free(text);
  }
  EXPECT_EQ(online, DumpOf(Site("a")));
}

TEST_F(ModelTransferTest, AppendMergesAndSubtractUndoesItExactly) {
  MakeSiteB();
  const std::string dump_a = DumpOf(Site("a"));
  const std::string dump_b = DumpOf(Site("b"));
  model::ModelStats stats_a, stats_b;
  {
    stats_a = *(*RocksdbStore::Open(Site("a")))->Stats();
    stats_b = *(*RocksdbStore::Open(Site("b")))->Stats();
  }
  auto appended = Restore(Site("b"), ImportMode::kAppend, dump_a);
  ASSERT_TRUE(appended.has_value()) << appended.error().message;
  EXPECT_EQ(appended->not_subtracted, 0u);
  ExpectConsistent(Site("b"));
  {
    auto store = RocksdbStore::Open(Site("b"));
    ASSERT_TRUE(store.has_value());
    const auto merged = (*store)->Stats();
    for (std::size_t c = 0; c < 2; ++c) {
      EXPECT_EQ(merged->classes[c].documents,
                stats_a.classes[c].documents + stats_b.classes[c].documents);
      EXPECT_EQ(merged->classes[c].tokens, stats_a.classes[c].tokens + stats_b.classes[c].tokens);
    }
    // b's own messages can still be forgotten, and a's counts stay.
    Forget(**store, "b1");
    EXPECT_EQ((*store)->Stats()->classes[0].documents, stats_a.classes[0].documents);
  }
  ExpectConsistent(Site("b"));
  {
    auto store = RocksdbStore::Open(Site("b"));
    Learn(**store, "b1", "spam", "send us your password");  // Learned again, as before.
  }
  auto subtracted = Restore(Site("b"), ImportMode::kSubtract, dump_a);
  ASSERT_TRUE(subtracted.has_value()) << subtracted.error().message;
  EXPECT_EQ(subtracted->not_subtracted, 0u);
  EXPECT_EQ(DumpOf(Site("b")), dump_b);
  ExpectConsistent(Site("b"));
}

TEST_F(ModelTransferTest, SubtractNeverTakesWhatTheLedgerAdded) {
  const std::string dump = DumpOf(Site("a"));
  auto subtracted = Restore(Site("a"), ImportMode::kSubtract, dump);
  ASSERT_TRUE(subtracted.has_value()) << subtracted.error().message;
  EXPECT_GT(subtracted->not_subtracted, 0u);
  EXPECT_EQ(DumpOf(Site("a")), dump);  // Every count is the ledger's: nothing was taken.
  ExpectConsistent(Site("a"));
}

TEST_F(ModelTransferTest, ADamagedOrForeignDumpChangesNothing) {
  MakeSiteB();
  const std::string dump_a = DumpOf(Site("a"));
  const std::string dump_b = DumpOf(Site("b"));

  const std::string truncated = dump_a.substr(0, dump_a.size() - 20);
  auto cut = Restore(Site("b"), ImportMode::kAppend, truncated);
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().code, ErrorCode::kDataLoss);
  EXPECT_THAT(cut.error().message, HasSubstr("truncated"));

  std::string altered = dump_a;
  const std::size_t line = altered.find("\nt ");
  altered[altered.find(' ', line + 3) + 1] = '9';  // One count changed: the totals disagree.
  auto damaged = Restore(Site("b"), ImportMode::kAppend, altered);
  ASSERT_FALSE(damaged.has_value());
  EXPECT_EQ(damaged.error().code, ErrorCode::kDataLoss);

  tokenizer::TokenizerOptions bigrams;
  bigrams.word_bigrams = true;
  auto foreign = Restore(Site("b"), ImportMode::kReplace, dump_a, TokenizerFingerprint(bigrams));
  ASSERT_FALSE(foreign.has_value());
  EXPECT_EQ(foreign.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(foreign.error().message, HasSubstr("word_bigrams is 0 in the dump and 1 here"));
  tokenizer::TokenizerOptions ngrams;
  ngrams.byte_ngrams = 4;
  auto without_ngrams =
      Restore(Site("b"), ImportMode::kReplace, dump_a, TokenizerFingerprint(ngrams));
  ASSERT_FALSE(without_ngrams.has_value());
  EXPECT_EQ(without_ngrams.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(without_ngrams.error().message,
              HasSubstr("byte_ngrams is (none) in the dump and 4 here, byte_ngram_head is (none) "
                        "in the dump and 2500 here"));

  EXPECT_EQ(DumpOf(Site("b")), dump_b);
  EXPECT_FALSE(std::filesystem::exists(Site("b") + ".restore-new"));
  ExpectConsistent(Site("b"));
}

TEST_F(ModelTransferTest, ARestoreIsRefusedWhileADaemonHasTheFolder) {
  const std::string dump = DumpOf(Site("a"));
  auto store = RocksdbStore::Open(Site("a"));
  ASSERT_TRUE(store.has_value());
  for (ImportMode mode : {ImportMode::kReplace, ImportMode::kAppend}) {
    auto import = storage::ModelImport::Begin(Site("a"), mode);
    ASSERT_FALSE(import.has_value());
    EXPECT_EQ(import.error().code, ErrorCode::kInternal);
    EXPECT_THAT(import.error().message, HasSubstr("lock"));
  }
}

TEST_F(ModelTransferTest, AppendCreatesTheClassesTheFolderLacks) {
  {
    auto store = RocksdbStore::Open(Site("c"));
    ASSERT_TRUE(store.has_value());
    Learn(**store, "c1", "phishing", "send us your password");
  }
  auto appended = Restore(Site("a"), ImportMode::kAppend, DumpOf(Site("c")));
  ASSERT_TRUE(appended.has_value()) << appended.error().message;
  auto store = RocksdbStore::Open(Site("a"));
  ASSERT_TRUE(store.has_value());
  const auto index = (*store)->Stats()->FindClass("phishing");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ((*store)->Stats()->classes[*index].documents, 1u);
  store->reset();
  ExpectConsistent(Site("a"));
}

}  // namespace
}  // namespace nbspamd::dump
