// RocksdbStore, its user layers: loading a user's layer into the cache, reading it, its stats and
// ledger, and deleting a user. The rest of the class is in rocksdb_store.cc and
// rocksdb_store_recovery.cc.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "model/user_layer.h"
#include "storage/encoding.h"
#include "storage/rocksdb_database.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"
#include "storage/rocksdb_store.h"

namespace nbspamd::storage {

std::expected<std::shared_ptr<UserLayer>, Error> RocksdbStore::LoadUser(
    std::string_view user) const {
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return std::make_shared<UserLayer>();  // A folder without layers.
  // The stats record (kind 's') sorts just before the token records (kind 't'): one scan from
  // the one to the end of the other reads the whole layer, at one point in time.
  const std::string begin = UserStatsKey(user);
  const std::string tokens_begin = UserKindPrefix(user, kUserTokenKind);
  const std::string end = UserKindPrefix(user, kUserTokenKind + 1);
  const rocksdb::Slice upper_bound(end);
  rocksdb::ReadOptions read_options;
  read_options.iterate_upper_bound = &upper_bound;
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, users));
  it->Seek(begin);
  if (!it->Valid() || it->key() != rocksdb::Slice(begin)) {
    if (!it->status().ok()) return RocksdbError("reading a user layer", it->status());
    return std::make_shared<UserLayer>();  // No stats record: no layer (and so no tokens).
  }
  auto stats = DecodeModelStats(std::string_view(it->value().data(), it->value().size()));
  if (!stats) return std::unexpected(stats.error());
  // Sized for the user's tokens, capped so that a corrupt count cannot ask for unbounded memory.
  auto layer = std::make_shared<UserLayer>(
      std::min<std::uint64_t>(stats->vocabulary_size, std::uint64_t{1} << 20));
  TokenCounts counts;
  std::uint64_t tokens = 0;
  for (it->Next(); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    auto hash = DecodeTokenKey(key.substr(tokens_begin.size()));
    if (!hash) return std::unexpected(hash.error());
    auto decoded =
        DecodeTokenCountsInto(std::string_view(it->value().data(), it->value().size()), counts);
    if (!decoded) return std::unexpected(decoded.error());
    layer->Load(*hash, counts);
    ++tokens;
  }
  if (!it->status().ok()) return RocksdbError("reading a user layer", it->status());
  if (tokens != stats->vocabulary_size) {
    return MakeError(ErrorCode::kDataLoss, "the layer of user '" + std::string(user) +
                                               "' has a token count that does not match its stats");
  }
  layer->LoadStats(std::move(*stats));
  return layer;
}

std::expected<std::shared_ptr<UserLayer>, Error> RocksdbStore::CachedUser(
    std::string_view user) const {
  if (auto layer = user_cache_.Find(user)) return layer;
  const std::uint64_t generation = user_cache_.Generation();
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  auto loaded = LoadUser(user);
  if (!loaded) return std::unexpected(loaded.error());
  return user_cache_.InsertLoaded(std::string(user), std::move(*loaded), generation);
}

std::expected<std::uint64_t, Error> RocksdbStore::CountUsers() const {
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return 0;
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, users));
  std::uint64_t count = 0;
  it->SeekToFirst();
  while (it->Valid()) {
    auto key = DecodeUserKey(std::string_view(it->key().data(), it->key().size()));
    if (!key) return std::unexpected(key.error());
    const std::string user(key->user);
    const std::string stats_key = UserStatsKey(user);
    it->Seek(stats_key);
    if (it->Valid() && it->key() == rocksdb::Slice(stats_key)) ++count;
    it->Seek(UserKeyEnd(user));
  }
  if (!it->status().ok()) return RocksdbError("counting user layers", it->status());
  return count;
}

std::expected<std::optional<model::Snapshot>, Error> RocksdbStore::ReadUser(
    std::string_view user, const model::ModelStats& global,
    std::span<const BagEntry> entries) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  auto layer = CachedUser(user);
  if (!layer) return std::unexpected(layer.error());
  return (*layer)->Read(global, entries);
}

std::expected<std::optional<model::ModelStats>, Error> RocksdbStore::UserStats(
    std::string_view user) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  auto layer = CachedUser(user);
  if (!layer) return std::unexpected(layer.error());
  const auto stats = (*layer)->Stats();
  if (IsEmptyLayer(*stats)) return std::nullopt;
  return model::AlignLayerStats(*stats, *cache_.Stats());
}

std::expected<std::vector<UserSummary>, Error> RocksdbStore::ListUsers(std::string_view after,
                                                                       std::size_t limit) const {
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  std::vector<UserSummary> users;
  rocksdb::ColumnFamilyHandle* const family = database_->family(kUsers);
  if (family == nullptr) return users;
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, family));
  // As CountUsers: from each user's first key, to its stats record, then past all its keys.
  if (after.empty()) {
    it->SeekToFirst();
  } else {
    it->Seek(UserKeyEnd(after));
  }
  const auto global = cache_.Stats();
  while (it->Valid() && users.size() < limit) {
    auto key = DecodeUserKey(std::string_view(it->key().data(), it->key().size()));
    if (!key) return std::unexpected(key.error());
    const std::string user(key->user);
    const std::string stats_key = UserStatsKey(user);
    it->Seek(stats_key);
    if (it->Valid() && it->key() == rocksdb::Slice(stats_key)) {
      auto stats = DecodeModelStats(std::string_view(it->value().data(), it->value().size()));
      if (!stats) return std::unexpected(stats.error());
      if (!IsEmptyLayer(*stats)) users.push_back({user, model::AlignLayerStats(*stats, *global)});
    }
    it->Seek(UserKeyEnd(user));
  }
  if (!it->status().ok()) return RocksdbError("listing user layers", it->status());
  return users;
}

std::expected<std::optional<model::LedgerEntry>, Error> RocksdbStore::FindUserLearned(
    std::string_view user, std::string_view id) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return std::nullopt;
  std::string value;
  const rocksdb::Status status =
      database_->db().Get(rocksdb::ReadOptions(), users, UserLedgerKey(user, id), &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return RocksdbError("reading a user's ledger", status);
  auto entry = DecodeLedgerEntry(value);
  if (!entry) return std::unexpected(entry.error());
  return std::move(*entry);
}

std::expected<std::vector<LearnedMessage>, Error> RocksdbStore::ListUserLearned(
    std::string_view user, std::string_view source, std::int64_t since, std::int64_t until,
    std::size_t limit) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::vector<LearnedMessage> found;
  if (since >= until) return found;
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return found;
  rocksdb::DB& db = database_->db();
  rocksdb::ManagedSnapshot snapshot(&db);
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot.snapshot();
  const std::string prefix = UserKindPrefix(user, kUserSourceKind);
  const std::string end = prefix + SourceKeyPrefix(source, until);
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(read_options, users));
  for (it->Seek(prefix + SourceKeyPrefix(source, since)); it->Valid() && found.size() < limit;
       it->Next()) {
    if (it->key().compare(end) >= 0) break;
    const std::string_view key(it->key().data(), it->key().size());
    auto source_key = DecodeSourceKey(key.substr(prefix.size()));
    if (!source_key) return std::unexpected(source_key.error());
    std::string value;
    const rocksdb::Status status =
        db.Get(read_options, users, UserLedgerKey(user, source_key->id), &value);
    if (!status.ok()) return RocksdbError("reading a user's ledger", status);
    auto entry = DecodeLedgerEntry(value);
    if (!entry) return std::unexpected(entry.error());
    found.push_back({std::move(source_key->id), std::move(entry->label), std::move(entry->origin)});
  }
  if (!it->status().ok()) return RocksdbError("reading a user's source index", it->status());
  return found;
}

std::expected<std::optional<std::int64_t>, Error> RocksdbStore::UserLastLearned(
    std::string_view user) const {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::optional<std::int64_t> newest;
  std::shared_lock lock(database_mutex_);
  if (!database_) return std::unexpected(StoppedError());
  rocksdb::ColumnFamilyHandle* const users = database_->family(kUsers);
  if (users == nullptr) return newest;
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  const std::string prefix = UserKindPrefix(user, kUserSourceKind);
  const std::string end = UserKindPrefix(user, kUserSourceKind + 1);
  std::unique_ptr<rocksdb::Iterator> it(database_->db().NewIterator(read_options, users));
  for (it->Seek(prefix); it->Valid() && it->key().compare(end) < 0; it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    auto source_key = DecodeSourceKey(key.substr(prefix.size()));
    if (!source_key) return std::unexpected(source_key.error());
    newest = std::max(newest.value_or(source_key->learned_at), source_key->learned_at);
  }
  if (!it->status().ok()) return RocksdbError("reading a user's source index", it->status());
  if (newest) return newest;
  // No live record: the ledger retention may have retired them all (they leave the index but
  // keep their origin), and the user still taught the layer then.
  const std::string ledger = UserKindPrefix(user, kUserLedgerKind);
  const std::string ledger_end = UserKindPrefix(user, kUserLedgerKind + 1);
  for (it->Seek(ledger); it->Valid() && it->key().compare(ledger_end) < 0; it->Next()) {
    auto entry = DecodeLedgerEntry(std::string_view(it->value().data(), it->value().size()));
    if (!entry) return std::unexpected(entry.error());
    newest = std::max(newest.value_or(entry->origin.learned_at), entry->origin.learned_at);
  }
  if (!it->status().ok()) return RocksdbError("reading a user's ledger", it->status());
  return newest;
}

std::expected<void, Error> RocksdbStore::DeleteUser(std::string_view user,
                                                    std::string_view stream_position) {
  if (auto valid = model::CheckUserId(user); !valid) return std::unexpected(valid.error());
  std::lock_guard write_lock(write_mutex_);
  if (!writable_.load()) return std::unexpected(StoppedError());
  std::shared_lock database_lock(database_mutex_);
  std::shared_ptr<UserLayer> layer = user_cache_.Find(user);
  if (!layer) {
    auto loaded = LoadUser(user);
    if (!loaded) return std::unexpected(loaded.error());
    layer = std::move(*loaded);
  }
  const bool existed = !IsEmptyLayer(*layer->Stats());
  // One range tombstone covers every key of the user: layer, ledger and source index.
  rocksdb::WriteBatch batch;
  if (database_->family(kUsers) != nullptr) {
    batch.DeleteRange(database_->family(kUsers), UserKeyPrefix(user), UserKeyEnd(user));
  }
  if (batch.Count() == 0 && stream_position.empty()) return {};
  if (!stream_position.empty()) {
    batch.Put(database_->family(kMeta), kStreamPositionKey,
              rocksdb::Slice(stream_position.data(), stream_position.size()));
  }
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  const rocksdb::Status status = database_->db().Write(write_options, &batch);
  if (!status.ok()) {
    if (!FaultOf(status)) return RocksdbError("deleting a user", status);
    return std::unexpected(StopWrites("deleting a user", status));
  }
  user_cache_.Erase(user);
  if (existed) --user_count_;
  if (!stream_position.empty()) {
    std::lock_guard lock(position_mutex_);
    stream_position_ = std::string(stream_position);
  }
  return {};
}

UserLayerFigures RocksdbStore::UserFigures() const {
  const UserLayerCacheFigures cache = user_cache_.Figures();
  return {user_count_.load(), cache.layers, cache.bytes, cache.hits, cache.misses};
}
}  // namespace nbspamd::storage
