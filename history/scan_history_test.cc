#include "history/scan_history.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "history/scan_codec.h"
#include "history/scan_id.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::history {
namespace {

constexpr std::int64_t kDay = 86'400'000;
constexpr std::int64_t kStart = 1'700'000'000'000;

class ScanHistoryTest : public ::testing::Test {
 protected:
  std::unique_ptr<ScanHistory> Open(std::uint64_t max_scans = 1000, std::int64_t max_age = kDay) {
    auto history = ScanHistory::Open({.path = dir_.Join("history"),
                                      .max_scans = max_scans,
                                      .max_age_ms = max_age,
                                      .clock_ms = [this] { return now_.load(); }});
    EXPECT_TRUE(history) << history.error().message;
    return history ? std::move(*history) : nullptr;
  }

  // A scan made now, `i` setting it apart.
  ScanRecord Scan(int i, std::string user = "", std::string verdict = "spam") {
    ScanRecord record;
    record.summary = {.scan_id = ids_.Next(now_),
                      .time_ms = now_,
                      .front_end = "http",
                      .user = std::move(user),
                      .message_key = "message-" + std::to_string(i),
                      .label = verdict == "ham" ? "ham" : "spam",
                      .verdict = std::move(verdict),
                      .score = i * 0.5,
                      .size = 100,
                      .tokens = 3};
    record.detail.bag = {{static_cast<TokenHash>(i + 1), 1}, {1'000'000, 2}};
    record.detail.top = {{"word" + std::to_string(i), TokenSource::kBody, 1, 1.5}};
    return record;
  }

  TempDir dir_;
  std::atomic<std::int64_t> now_{kStart};
  ScanIdGenerator ids_{0xabcd0000};
};

TEST_F(ScanHistoryTest, ARecordedScanIsFoundAtOnceAndAfterAReopen) {
  auto history = Open();
  const ScanRecord scan = Scan(1);
  history->Record(scan);
  auto found = history->Find(scan.summary.scan_id);  // Maybe still queued.
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, scan);
  history.reset();  // Writes the queue.
  history = Open();
  found = history->Find(scan.summary.scan_id);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, scan);
  EXPECT_EQ(history->Figures().kept, 1u);
}

TEST_F(ScanHistoryTest, RocksDbWritesNoLogFileOfItsOwn) {
  // Its log goes to options.log: a LOG file beside the history, on a full disk, once left
  // RocksDB asserting after its first failed write.
  auto history = Open();
  history->Record(Scan(1));
  history.reset();
  history = Open();
  history.reset();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.Join("history"))) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("LOG")) << entry.path();
  }
}

TEST_F(ScanHistoryTest, ALoneScanIsWrittenSoonWithoutMoreTraffic) {
  auto history = Open();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // The writer waits, idle.
  history->Record(Scan(1));
  // No batch fills on a quiet server: the writer still writes within its delay (20 ms), so a
  // crash then loses nothing; 5 s is the margin of a slow machine.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (history->Figures().recorded == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(history->Figures().recorded, 1u);
}

TEST_F(ScanHistoryTest, AnUnknownIdIsNotFoundAnOldOneExpiredAndAMalformedOneInvalid) {
  auto history = Open();
  const ScanRecord old = Scan(1);
  now_ += 1000;
  const ScanRecord kept = Scan(2);
  history->Record(old);
  history->Record(kept);
  history->Flush();
  now_ += kDay;  // `old` is now beyond the age bound; a new scan applies the bounds.
  history->Record(Scan(3));
  history->Flush();
  EXPECT_EQ(history->Find(old.summary.scan_id).error().code, ErrorCode::kExpired);
  EXPECT_TRUE(history->Find(Scan(4).summary.scan_id).error().code == ErrorCode::kNotFound);
  EXPECT_EQ(history->Find("nonsense").error().code, ErrorCode::kInvalidArgument);
  const std::string before_all = FirstScanIdAt(kStart - 10);
  const auto expired = history->Find(before_all);
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.error().code, ErrorCode::kExpired);
  EXPECT_NE(expired.error().message.find("has aged out of the history"), std::string::npos);
  EXPECT_EQ(history->Figures().expired, 1u);         // `old`: more than a day old.
  EXPECT_TRUE(history->Find(kept.summary.scan_id));  // Exactly a day old: kept.
}

TEST_F(ScanHistoryTest, TheCountBoundDropsTheOldestFirst) {
  auto history = Open(/*max_scans=*/10);
  std::vector<std::string> ids;
  for (int i = 0; i < 25; ++i) {
    now_ += 1;
    ScanRecord scan = Scan(i);
    ids.push_back(scan.summary.scan_id);
    history->Record(std::move(scan));
    if (i % 7 == 0) history->Flush();
  }
  history->Flush();
  EXPECT_EQ(history->Figures().kept, 10u);
  EXPECT_EQ(history->Figures().recorded, 25u);
  EXPECT_EQ(history->Figures().expired, 15u);
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(history->Find(ids[i]).error().code, ErrorCode::kExpired) << i;
  }
  for (int i = 15; i < 25; ++i) EXPECT_TRUE(history->Find(ids[i])) << i;
}

TEST_F(ScanHistoryTest, TheBoundsCountByIdAcrossAReopenAUserDeletedAndScansOutOfOrder) {
  // The bounds work from the ids they keep in memory: loaded at open, kept in order when a scan
  // arrives late, less a deleted user's; what they remove, oldest id first, is gone from disk.
  std::vector<std::string> ids;  // In id order.
  {
    auto history = Open(/*max_scans=*/10);
    for (int i = 0; i < 6; ++i) {
      now_ += 10;
      ScanRecord scan = Scan(i, i == 2 ? "erin" : "");
      ids.push_back(scan.summary.scan_id);
      history->Record(std::move(scan));
    }
    history->Flush();
  }
  auto history = Open(/*max_scans=*/10);
  EXPECT_EQ(history->Figures().kept, 6u);
  ScanRecord late = Scan(6);
  late.summary.scan_id = ids_.Next(kStart + 5);  // Made before every other, written after.
  ids.insert(ids.begin(), late.summary.scan_id);
  history->Record(late);
  ScanRecord foreign = Scan(7);
  foreign.summary.scan_id = "not-a-scan-id";
  history->Record(foreign);
  history->Flush();
  EXPECT_EQ(history->Figures().dropped, 1u);  // The one without a scan id.
  ASSERT_TRUE(history->DeleteUser("erin"));
  EXPECT_EQ(history->Find(ids[3]).error().code, ErrorCode::kNotFound);  // Erin's.
  ids.erase(ids.begin() + 3);
  EXPECT_EQ(history->Figures().kept, 6u);
  for (int i = 8; i < 15; ++i) {
    now_ += 10;
    ScanRecord scan = Scan(i);
    ids.push_back(scan.summary.scan_id);
    history->Record(std::move(scan));
  }
  history->Flush();
  // 13 scans for 10 places: the late one and the two oldest after it go.
  EXPECT_EQ(history->Figures().kept, 10u);
  EXPECT_EQ(history->Figures().expired, 3u);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i < 3) {
      EXPECT_EQ(history->Find(ids[i]).error().code, ErrorCode::kExpired) << i;
    } else {
      EXPECT_TRUE(history->Find(ids[i])) << i;
    }
  }
  history.reset();
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir_.Join("history"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::vector<std::string> on_disk;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}));
  for (it->SeekToFirst(); it->Valid(); it->Next()) on_disk.push_back(it->key().ToString());
  std::vector<std::string> expected = {"k"};  // The key of the hashed facts stays,
  for (std::size_t i = 3; i < ids.size(); ++i) expected.push_back("m" + ids[i]);
  expected.push_back("s");  // and so does the key of the scan header.
  EXPECT_EQ(on_disk, expected);
}

TEST_F(ScanHistoryTest, AListingIsNewestFirstFilteredAndPaged) {
  auto history = Open();
  std::vector<std::string> spam_ids;
  for (int i = 0; i < 30; ++i) {
    now_ += 10;
    ScanRecord scan = Scan(i, i % 3 == 0 ? "alice" : "", i % 2 == 0 ? "spam" : "ham");
    if (i % 2 == 0) spam_ids.push_back(scan.summary.scan_id);
    history->Record(std::move(scan));
    if (i == 20) history->Flush();  // Some written, some maybe queued: one listing of both.
  }
  std::vector<std::string> listed;
  ScanQuery query{.verdict = "spam", .limit = 4};
  for (int pages = 0; pages < 10; ++pages) {
    auto page = history->List(query);
    ASSERT_TRUE(page) << page.error().message;
    EXPECT_LE(page->scans.size(), 4u);
    for (const ScanSummary& scan : page->scans) listed.push_back(scan.scan_id);
    if (page->next.empty()) break;
    query.before = page->next;
  }
  std::vector<std::string> expected(spam_ids.rbegin(), spam_ids.rend());
  EXPECT_EQ(listed, expected);

  auto alice = history->List({.user = "alice", .limit = 100});
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->scans.size(), 10u);
  EXPECT_TRUE(alice->next.empty());

  auto window = history->List({.since_ms = kStart + 100, .until_ms = kStart + 150, .limit = 100});
  ASSERT_TRUE(window);
  ASSERT_EQ(window->scans.size(), 5u);  // Times 100, 110, ..., 140.
  EXPECT_EQ(window->scans.front().time_ms, kStart + 140);
  EXPECT_EQ(window->scans.back().time_ms, kStart + 100);

  auto text = history->List({.text = "MESSAGE-7", .limit = 100});
  ASSERT_TRUE(text);
  ASSERT_EQ(text->scans.size(), 1u);
  EXPECT_EQ(text->scans[0].message_key, "message-7");
}

TEST_F(ScanHistoryTest, BadListingsAreInvalidArguments) {
  auto history = Open();
  EXPECT_EQ(history->List({.limit = 0}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(history->List({.limit = kMaxScanPage + 1}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(history->List({.before = "zzz"}).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ScanHistoryTest, DeletingAUserRemovesTheirScansOnly) {
  auto history = Open();
  std::vector<std::string> alice, bob;
  for (int i = 0; i < 12; ++i) {
    now_ += 1;
    ScanRecord scan = Scan(i, i % 2 == 0 ? "alice" : "bob");
    (i % 2 == 0 ? alice : bob).push_back(scan.summary.scan_id);
    history->Record(std::move(scan));
    if (i == 5) history->Flush();
  }
  auto removed = history->DeleteUser("alice");
  ASSERT_TRUE(removed) << removed.error().message;
  EXPECT_EQ(*removed, 6u);
  for (const auto& id : alice) EXPECT_FALSE(history->Find(id)) << id;
  for (const auto& id : bob) EXPECT_TRUE(history->Find(id)) << id;
  history->Flush();
  EXPECT_EQ(history->Figures().kept, 6u);
}

// Every byte of the bag segments in the history's folder.
std::string BagBytes(const std::filesystem::path& history) {
  std::string bytes;
  for (const auto& entry : std::filesystem::directory_iterator(history / "bags")) {
    std::ifstream file(entry.path(), std::ios::binary);
    bytes.append(std::istreambuf_iterator<char>(file), {});
  }
  return bytes;
}

TEST_F(ScanHistoryTest, DeletingAUserErasesTheirDetailsFromTheDisk) {
  auto history = Open();
  constexpr TokenHash kAlices = 0x5ec7e75ec7e75ec7;
  constexpr TokenHash kBobs = 0x0b0b0b0b0b0b0b0b;
  for (const auto& [user, hash] : {std::pair{"alice", kAlices}, std::pair{"bob", kBobs}}) {
    ScanRecord scan = Scan(1, user);
    scan.detail.bag = {{hash, 1}};
    scan.detail.top = {{std::string(user) + "s-own-word", TokenSource::kBody, 1, 2.0}};
    history->Record(std::move(scan));
  }
  history->Flush();
  const auto contains = [&](std::string_view bytes) {
    return BagBytes(dir_.Join("history")).find(bytes) != std::string::npos;
  };
  const auto hash_bytes = [](const TokenHash& hash) {
    return std::string_view(reinterpret_cast<const char*>(&hash), sizeof hash);
  };
  ASSERT_TRUE(contains(hash_bytes(kAlices)));
  ASSERT_TRUE(contains("alices-own-word"));
  ASSERT_TRUE(history->DeleteUser("alice"));
  EXPECT_FALSE(contains(hash_bytes(kAlices)));
  EXPECT_FALSE(contains("alices-own-word"));
  EXPECT_TRUE(contains(hash_bytes(kBobs)));
  EXPECT_TRUE(contains("bobs-own-word"));
}

TEST_F(ScanHistoryTest, ScansOfTheFirstFormatAreReadBoundedAndDeleted) {
  // Summaries of format 1, their details in RocksDB beside them (each with its bag, format 1).
  const std::string path = dir_.Join("history");
  std::vector<ScanRecord> old_scans = {Scan(1, "carol"), Scan(2, "dave")};
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, path, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    for (ScanRecord& scan : old_scans) {
      std::string summary;
      AppendScanSummary(summary, scan.summary);  // Without where its detail is: format 1.
      summary[0] = 1;
      // No top token, one bag entry: hash 7, count 1.
      const std::string detail = {1, 0, 1, 7, 1};
      scan.detail = {.top = {}, .bag = {{7, 1}}};
      ASSERT_TRUE(db->Put({}, "m" + scan.summary.scan_id, summary).ok());
      ASSERT_TRUE(db->Put({}, "d" + scan.summary.scan_id, detail).ok());
    }
  }
  now_ += 1000;
  auto history = Open(/*max_scans=*/3);
  EXPECT_EQ(history->Figures().kept, 2u);
  for (const ScanRecord& scan : old_scans) {
    auto found = history->Find(scan.summary.scan_id);
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(*found, scan);
  }
  auto deleted = history->DeleteUser("dave");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(*deleted, 1u);
  EXPECT_EQ(history->Find(old_scans[1].summary.scan_id).error().code, ErrorCode::kNotFound);
  // Three new scans: the count bound removes carol's.
  for (int i = 3; i < 6; ++i) history->Record(Scan(i));
  history->Flush();
  EXPECT_EQ(history->Find(old_scans[0].summary.scan_id).error().code, ErrorCode::kExpired);
  history.reset();
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  for (const ScanRecord& scan : old_scans) {
    EXPECT_TRUE(db->Get({}, "d" + scan.summary.scan_id, &value).IsNotFound());
  }
}

TEST_F(ScanHistoryTest, ABagSegmentGoesOnceEveryScanInItHasAgedOut) {
  // A segment is started by each open; the bound keeps one scan. A segment goes once the oldest
  // kept scan is a minute newer than the next segment's first (scans may reach the writer a
  // little out of order).
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto history = Open(/*max_scans=*/1);
    ScanRecord scan = Scan(i);
    ids.push_back(scan.summary.scan_id);
    history->Record(std::move(scan));
    history->Flush();
    now_ += 5 * 60'000;
  }
  const auto segments = [&] {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.Join("history") + "/bags")) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }();
  EXPECT_EQ(segments, (std::vector<std::string>{"bags-" + ids[1], "bags-" + ids[2]}));
  auto history = Open(/*max_scans=*/1);
  EXPECT_EQ(history->Find(ids[0]).error().code, ErrorCode::kExpired);
  EXPECT_TRUE(history->Find(ids[2]));
}

TEST_F(ScanHistoryTest, AFullQueueDropsAndCountsInsteadOfWaiting) {
  auto opened = ScanHistory::Open({.path = dir_.Join("small"), .queue_limit = 1});
  ASSERT_TRUE(opened);
  auto& history = **opened;
  for (int i = 0; i < 2000; ++i) history.Record(Scan(i));
  history.Flush();
  const ScanHistoryFigures figures = history.Figures();
  EXPECT_EQ(figures.recorded + figures.dropped, 2000u);
  EXPECT_GT(figures.dropped, 0u);
}

TEST_F(ScanHistoryTest, ManyThreadsRecordAndReadAtOnce) {
  // 1200 scans in all, 1000 kept: the bound removes scans while the threads record, but never
  // one just recorded (the 900 the other threads record cannot push it out of the newest 1000).
  auto history = Open(/*max_scans=*/1000);
  std::vector<std::thread> threads;
  std::atomic<int> failures = 0;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        ScanRecord scan = Scan(t * 1000 + i);
        const std::string id = scan.summary.scan_id;
        history->Record(std::move(scan));
        if (!history->Find(id)) ++failures;  // Just recorded: kept.
        if (i % 50 == 0 && !history->List({.limit = 20})) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  history->Flush();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(history->Figures().kept, 1000u);
}

TEST_F(ScanHistoryTest, AFolderThatCannotBeOpenedIsUnavailable) {
  const auto opened = ScanHistory::Open({.path = "/proc/nbspamd-history"});
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(ScanHistory::Open({.path = dir_.Join("x"), .max_scans = 0}).error().code,
            ErrorCode::kInvalidArgument);
}

// A batch whose write throws, whatever it throws (an int, a std::exception), is dropped, noted
// and counted, and the writer thread goes on: without its net, the first throw would end the
// process (std::terminate), though a fault of the history must never stop classification.
TEST_F(ScanHistoryTest, AFaultOfTheWriterDropsItsBatchAndTheWriterGoesOn) {
  std::atomic<int> batches = 0;
  auto opened = ScanHistory::Open({.path = dir_.Join("history"),
                                   .clock_ms = [this] { return now_.load(); },
                                   .before_write =
                                       [&batches] {
                                         const int n = batches.fetch_add(1);
                                         if (n == 0) throw 42;  // No std::exception.
                                         if (n == 1) throw std::runtime_error("no memory");
                                       }});
  ASSERT_TRUE(opened) << opened.error().message;
  std::unique_ptr<ScanHistory> history = std::move(*opened);
  history->Record(Scan(1));
  history->Flush();
  EXPECT_EQ(history->Figures().writer_exceptions, 1u);
  history->Record(Scan(2));
  history->Flush();
  EXPECT_EQ(history->Figures().writer_exceptions, 2u);
  EXPECT_EQ(history->Figures().dropped, 2u);
  const ScanRecord kept = Scan(3);
  history->Record(kept);
  history->Flush();
  EXPECT_EQ(history->Figures().writer_exceptions, 2u);
  EXPECT_EQ(history->Figures().recorded, 1u);
  auto found = history->Find(kept.summary.scan_id);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, kept);
}

}  // namespace
}  // namespace nbspamd::history

namespace nbspamd::history {
namespace {

LearnedChange Change(std::string label, std::int64_t at, std::string how = "scan_id",
                     std::string by = "alice") {
  return {.label = std::move(label), .time_ms = at, .how = std::move(how), .by = std::move(by)};
}

TEST_F(ScanHistoryTest, ALearnedStateShowsAtOnceSurvivesAReopenAndCountsChanges) {
  auto history = Open();
  const ScanRecord learned = Scan(1);
  const ScanRecord other = Scan(2);
  history->Record(learned);
  history->Record(other);
  const std::string& id = learned.summary.scan_id;
  history->RecordLearned(id, Change("spam", kStart + 5));
  auto found = history->Find(id);  // Before the writer wrote it.
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->summary.learned);
  EXPECT_EQ(found->summary.learned->label, "spam");
  EXPECT_EQ(found->summary.learned->by, "alice");
  EXPECT_EQ(found->summary.learned->changes, 1u);
  history->RecordLearned(id, Change("spam", kStart + 6, "message_id", "bob"));  // No change.
  history->RecordLearned(id, Change("ham", kStart + 7, "scan_header", "dovecot"));
  history->Flush();
  history.reset();

  history = Open();
  found = history->Find(id);
  ASSERT_TRUE(found) << found.error().message;
  const LearnedState expected{
      .label = "ham", .time_ms = kStart + 7, .how = "scan_header", .by = "dovecot", .changes = 2};
  EXPECT_EQ(found->summary.learned, expected);
  auto untouched = history->Find(other.summary.scan_id);
  ASSERT_TRUE(untouched);
  EXPECT_FALSE(untouched->summary.learned);
  // A listing shows it too, and filters by it.
  auto page = history->List({});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->scans.size(), 2u);
  EXPECT_EQ(page->scans[1].learned, expected);
  EXPECT_FALSE(page->scans[0].learned);
  for (const auto& [filter, count] : std::vector<std::pair<std::string, std::size_t>>{
           {"yes", 1}, {"ham", 1}, {"spam", 0}, {"no", 1}, {"forgotten", 0}}) {
    auto filtered = history->List({.learned = filter});
    ASSERT_TRUE(filtered) << filter;
    EXPECT_EQ(filtered->scans.size(), count) << filter;
  }
  history->RecordLearned(id, Change("", kStart + 8, "scan_id", "carol"));
  auto forgotten = history->List({.learned = "forgotten"});  // Not yet written: shown all the same.
  ASSERT_TRUE(forgotten);
  ASSERT_EQ(forgotten->scans.size(), 1u);
  EXPECT_EQ(forgotten->scans[0].learned->changes, 3u);
  EXPECT_TRUE(forgotten->scans[0].learned->forgotten);
  history->Flush();
  forgotten = history->List({.learned = "forgotten"});
  ASSERT_TRUE(forgotten);
  ASSERT_EQ(forgotten->scans.size(), 1u);
  EXPECT_EQ(history->List({.learned = "no"})->scans.size(), 2u);
}

TEST_F(ScanHistoryTest, ATrainByMessageKeyMarksTheScansOfThatKeyAndUserOnly) {
  auto history = Open();
  ScanRecord first = Scan(1);
  ScanRecord again = Scan(1);  // The same message classified twice.
  ScanRecord of_user = Scan(1, "erin");
  ScanRecord other = Scan(2);
  for (const ScanRecord* scan : {&first, &again, &of_user, &other}) history->Record(*scan);
  history->RecordLearnedByKey("", "message-1", Change("spam", kStart, "message_id", "bob"));
  history->Flush();
  for (const ScanRecord* scan : {&first, &again}) {
    auto found = history->Find(scan->summary.scan_id);
    ASSERT_TRUE(found && found->summary.learned);
    EXPECT_EQ(found->summary.learned->how, "message_id");
    EXPECT_EQ(found->summary.learned->by, "bob");
  }
  EXPECT_FALSE(history->Find(of_user.summary.scan_id)->summary.learned);
  EXPECT_FALSE(history->Find(other.summary.scan_id)->summary.learned);
}

TEST_F(ScanHistoryTest, LearnedStatesGoWithTheirScansByTheBoundsAndDeleteUser) {
  auto history = Open(/*max_scans=*/1000, /*max_age=*/kDay);
  const ScanRecord old_scan = Scan(1);
  history->Record(old_scan);
  const ScanRecord of_user = Scan(2, "alice");
  history->Record(of_user);
  history->RecordLearned(old_scan.summary.scan_id, Change("spam", kStart));
  history->RecordLearned(of_user.summary.scan_id, Change("ham", kStart));
  history->Flush();
  ASSERT_TRUE(history->DeleteUser("alice"));
  now_ += 2 * kDay;
  const ScanRecord fresh = Scan(3);
  history->Record(fresh);
  history->Flush();  // The bounds drop the old scan.
  EXPECT_EQ(history->Find(old_scan.summary.scan_id).error().code, ErrorCode::kExpired);
  history.reset();
  // No learned state is left behind in the database: only the fresh scan's keys.
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir_.Join("history"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  int learned_keys = 0;
  for (it->Seek("l"); it->Valid() && it->key().starts_with("l"); it->Next()) ++learned_keys;
  EXPECT_EQ(learned_keys, 0);
}

TEST_F(ScanHistoryTest, ClearFactsAreHashedOnceOlderThanTheirBound) {
  auto opened = ScanHistory::Open({.path = dir_.Join("history"),
                                   .max_scans = 1000,
                                   .max_age_ms = 30 * kDay,
                                   .clear_facts_ms = 7 * kDay,
                                   .clock_ms = [this] { return now_.load(); }});
  ASSERT_TRUE(opened);
  auto history = std::move(*opened);
  ScanRecord scan = Scan(1);
  scan.summary.facts = {.message_id = "m1@example.org",
                        .from_domain = "shop.example",
                        .subject = "Cheap watches today",
                        .client = "192.0.2.1",
                        .recipients = "alice@example.org"};
  scan.detail.top = {{"subject:watches", TokenSource::kHeader, 1, 2.0},
                     {"cheap", TokenSource::kBody, 1, 1.0}};
  history->Record(scan);
  history->Flush();
  auto page = history->List({.text = "watches"});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->scans.size(), 1u);  // A word of the subject finds it while it is clear.

  now_ += 8 * kDay;
  history->Record(Scan(2));  // A pass of the writer.
  history->Flush();
  auto found = history->Find(scan.summary.scan_id);
  ASSERT_TRUE(found);
  const ScanFacts& facts = found->summary.facts;
  EXPECT_EQ(facts.subject, HashedFact("Cheap watches today", history->fact_key()));
  EXPECT_EQ(facts.from_domain, HashedFact("shop.example", history->fact_key()));
  EXPECT_EQ(facts.recipients, HashedFact("alice@example.org", history->fact_key()));
  EXPECT_EQ(facts.message_id, "m1@example.org");  // Identifiers stay.
  EXPECT_EQ(facts.client, "192.0.2.1");
  EXPECT_EQ(found->detail.top[0].text, "subject:" + HashedFact("watches", history->fact_key()));
  EXPECT_EQ(found->detail.top[1].text, "cheap");
  EXPECT_TRUE(history->List({.text = "watches"})->scans.empty());
  EXPECT_EQ(history->List({.text = "cheap watches TODAY"})->scans.size(), 1u);  // Typed whole.
  history.reset();
  // Stored so: the summary itself was rewritten, not only shown hashed.
  history = Open(1000, 30 * kDay);
  EXPECT_EQ(history->Find(scan.summary.scan_id)->summary.facts.subject,
            HashedFact("Cheap watches today", history->fact_key()));
}

}  // namespace
}  // namespace nbspamd::history
