// ExportFolder and ExportDatabase (storage/model_transfer.h).
#include <rocksdb/db.h>

#include <memory>

#include "model/user_layer.h"
#include "storage/encoding.h"
#include "storage/model_transfer.h"
#include "storage/rocksdb_folder.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"

namespace nbspamd::storage {
namespace {

// Visits the tokens of [begin, end) of `family`, whose keys are `prefix_size` bytes of prefix
// then a token key.
std::expected<void, Error> VisitTokens(rocksdb::Iterator& it, std::string_view begin,
                                       std::string_view end, ModelVisitor& visitor) {
  TokenCounts counts;
  for (it.Seek(rocksdb::Slice(begin.data(), begin.size()));
       it.Valid() && (end.empty() || it.key().compare(rocksdb::Slice(end.data(), end.size())) < 0);
       it.Next()) {
    const std::string_view key(it.key().data(), it.key().size());
    auto hash = DecodeTokenKey(key.substr(begin.size()));
    if (!hash) return std::unexpected(hash.error());
    if (auto decoded =
            DecodeTokenCountsInto(std::string_view(it.value().data(), it.value().size()), counts);
        !decoded) {
      return std::unexpected(decoded.error());
    }
    while (!counts.empty() && counts.back() == 0) counts.pop_back();
    if (counts.empty()) continue;
    if (auto visited = visitor.Token(*hash, counts); !visited) return visited;
  }
  if (!it.status().ok()) return RocksdbError("reading the model", it.status());
  return {};
}

}  // namespace

std::expected<void, Error> ExportDatabase(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* meta,
                                          rocksdb::ColumnFamilyHandle* tokens,
                                          rocksdb::ColumnFamilyHandle* users,
                                          ModelVisitor& visitor) {
  const rocksdb::Snapshot* snapshot = db.GetSnapshot();
  const std::unique_ptr<const rocksdb::Snapshot, std::function<void(const rocksdb::Snapshot*)>>
      release(snapshot, [&db](const rocksdb::Snapshot* s) { db.ReleaseSnapshot(s); });
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot;
  read_options.fill_cache = false;
  std::string stats_value;
  const rocksdb::Status status = db.Get(read_options, meta, kModelStatsKey, &stats_value);
  if (!status.ok()) return RocksdbError("reading the model stats", status);
  auto global = DecodeModelStats(stats_value);
  if (!global) return std::unexpected(global.error());

  if (auto begun = visitor.BeginLayer("", *global); !begun) return begun;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(read_options, tokens));
  if (auto visited = VisitTokens(*it, "", "", visitor); !visited) return visited;
  if (auto ended = visitor.EndLayer(); !ended) return ended;
  if (users == nullptr) return {};

  it.reset(db.NewIterator(read_options, users));
  it->SeekToFirst();
  while (it->Valid()) {
    auto key = DecodeUserKey(std::string_view(it->key().data(), it->key().size()));
    if (!key) return std::unexpected(key.error());
    const std::string user(key->user);
    const std::string stats_key = UserStatsKey(user);
    it->Seek(stats_key);
    if (it->Valid() && it->key() == rocksdb::Slice(stats_key)) {
      auto stats = DecodeModelStats(std::string_view(it->value().data(), it->value().size()));
      if (!stats) return std::unexpected(stats.error());
      if (auto begun = visitor.BeginLayer(user, model::AlignLayerStats(*stats, *global)); !begun) {
        return begun;
      }
      const std::string begin = UserKindPrefix(user, kUserTokenKind);
      const std::string end = UserKindPrefix(user, kUserTokenKind + 1);
      if (auto visited = VisitTokens(*it, begin, end, visitor); !visited) return visited;
      if (auto ended = visitor.EndLayer(); !ended) return ended;
    }
    it->Seek(UserKeyEnd(user));
  }
  if (!it->status().ok()) return RocksdbError("reading the user layers", it->status());
  return {};
}

std::expected<void, Error> ExportFolder(const std::string& path, ModelVisitor& visitor) {
  auto folder = OpenRocksdbFolder(path, FolderAccess::kReadOnly);
  if (!folder) return std::unexpected(folder.error());
  if (auto stats = ReadFolderStats(*folder); !stats) return std::unexpected(stats.error());
  return ExportDatabase(*folder->db, folder->meta, folder->tokens, folder->users, visitor);
}

}  // namespace nbspamd::storage
