// RocksdbStore, NewestLearned: the newest records of the global ledger, by a merge of the source
// index's sources from their newest key back. The rest of the class is in rocksdb_store.cc.
#include <rocksdb/db.h>
#include <rocksdb/snapshot.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "storage/encoding.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::storage {
namespace {

// Releases a snapshot of `db` when it goes out of scope.
class SnapshotHold {
 public:
  explicit SnapshotHold(rocksdb::DB& db) : db_(db), snapshot_(db.GetSnapshot()) {}
  SnapshotHold(const SnapshotHold&) = delete;
  SnapshotHold& operator=(const SnapshotHold&) = delete;
  ~SnapshotHold() { db_.ReleaseSnapshot(snapshot_); }
  [[nodiscard]] const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB& db_;
  const rocksdb::Snapshot* snapshot_;
};

// One source's keys, read from its newest back.
struct SourceHead {
  std::string source;
  std::unique_ptr<rocksdb::Iterator> it;
  SourceKey key;  // Where `it` is; meaningless once `done`.
  bool done = false;
};

// Decodes where `head.it` is, or marks the head done when it left its source.
std::expected<void, Error> Settle(SourceHead& head) {
  if (!head.it->Valid()) {
    head.done = true;
    return {};
  }
  auto key = DecodeSourceKey(head.it->key().ToStringView());
  if (!key) return std::unexpected(key.error());
  if (key->source != head.source) {
    head.done = true;
    return {};
  }
  head.key = std::move(*key);
  return {};
}

}  // namespace

std::expected<std::vector<LearnedRecord>, Error> RocksdbStore::NewestLearned(
    std::size_t limit) const {
  std::vector<LearnedRecord> found;
  if (limit == 0) return found;
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::DB& db = database_->db();
  const SnapshotHold snapshot(db);
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot.get();

  // Every source's keys lie below source + "\x01" (a source key is source, 0, time, id).
  std::vector<SourceHead> heads;
  std::unique_ptr<rocksdb::Iterator> scan(
      db.NewIterator(read_options, database_->family(kSources)));
  for (scan->SeekToFirst(); scan->Valid();) {
    auto key = DecodeSourceKey(scan->key().ToStringView());
    if (!key) return std::unexpected(key.error());
    const std::string end = key->source + '\x01';
    if (key->source != model::kAutolearnSource) {
      SourceHead& head = heads.emplace_back();
      head.source = key->source;
      head.it.reset(db.NewIterator(read_options, database_->family(kSources)));
      head.it->SeekForPrev(end);
      if (auto settled = Settle(head); !settled) return std::unexpected(settled.error());
    }
    scan->Seek(end);
  }
  if (!scan->status().ok()) return RocksdbError("reading the source index", scan->status());

  while (found.size() < limit) {
    SourceHead* newest = nullptr;
    for (SourceHead& head : heads) {
      if (head.done) continue;
      if (newest == nullptr || std::tie(head.key.learned_at, head.key.id) >
                                   std::tie(newest->key.learned_at, newest->key.id)) {
        newest = &head;
      }
    }
    if (newest == nullptr) break;
    std::string value;
    const rocksdb::Status status =
        db.Get(read_options, database_->family(kLedger), rocksdb::Slice(newest->key.id), &value);
    if (!status.ok()) return RocksdbError("reading the training ledger", status);
    auto entry = DecodeLedgerEntry(value);
    if (!entry) return std::unexpected(entry.error());
    found.push_back({std::move(newest->key.id), std::move(entry->label), std::move(entry->origin),
                     entry->held_out});
    newest->it->Prev();
    if (auto settled = Settle(*newest); !settled) return std::unexpected(settled.error());
  }
  for (const SourceHead& head : heads) {
    if (!head.it->status().ok()) return RocksdbError("reading the source index", head.it->status());
  }
  return found;
}

}  // namespace nbspamd::storage
