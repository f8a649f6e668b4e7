#include "storage/retire_scan.h"

#include <utility>

#include "storage/encoding.h"
#include "storage/rocksdb_status.h"

namespace nbspamd::storage {
namespace {

// The source index key where the sources after `source` begin: its bytes and a 1 byte (a source
// key is the source, a 0 byte and more).
std::string NextSourceKey(std::string_view source) {
  std::string key(source);
  key.push_back('\1');
  return key;
}

}  // namespace

std::expected<RetireStep, Error> FindRetirable(rocksdb::Iterator& it, std::int64_t learned_before,
                                               std::size_t max_records, std::string_view from,
                                               std::vector<RetireCandidate>& candidates) {
  RetireStep step;
  // From `from`: the keys before it, retired by the steps before, are tombstones to skip.
  for (it.Seek(rocksdb::Slice(from.data(), from.size())); it.Valid();) {
    const std::string_view key(it.key().data(), it.key().size());
    auto decoded = DecodeSourceKey(key);
    if (!decoded) return std::unexpected(decoded.error());
    if (decoded->learned_at >= learned_before) {
      it.Seek(NextSourceKey(decoded->source));  // This source has none older.
      continue;
    }
    if (max_records != 0 && candidates.size() == max_records) {
      step.more = true;
      step.next = std::string(key);
      break;
    }
    candidates.push_back({std::string(key), std::move(decoded->id)});
    it.Next();
  }
  if (!it.status().ok()) return RocksdbError("reading the source index", it.status());
  return step;
}

std::expected<RetireStep, Error> FindUserRetirable(rocksdb::Iterator& it,
                                                   std::int64_t learned_before,
                                                   std::size_t max_records, std::string_view from,
                                                   std::vector<RetireUserCandidate>& candidates) {
  RetireStep step;
  // From `from`: the keys before it, retired by the steps before, are tombstones to skip.
  for (it.Seek(rocksdb::Slice(from.data(), from.size())); it.Valid();) {
    const std::string_view key(it.key().data(), it.key().size());
    auto decoded = DecodeUserKey(key);
    if (!decoded) return std::unexpected(decoded.error());
    const std::string user(decoded->user);
    if (decoded->kind < kUserSourceKind) {
      it.Seek(UserKindPrefix(user, kUserSourceKind));
      continue;
    }
    if (decoded->kind > kUserSourceKind) {
      it.Seek(UserKeyEnd(user));
      continue;
    }
    auto source_key = DecodeSourceKey(decoded->rest);
    if (!source_key) return std::unexpected(source_key.error());
    if (source_key->learned_at >= learned_before) {
      // This source of the user has none older: on to the next source (its bytes and a 1).
      std::string next = UserKindPrefix(user, kUserSourceKind) + source_key->source;
      next.push_back('\1');
      it.Seek(next);
      continue;
    }
    if (max_records != 0 && candidates.size() == max_records) {
      step.more = true;
      step.next = std::string(key);
      break;
    }
    candidates.push_back({user, std::string(key), std::move(source_key->id)});
    it.Next();
  }
  if (!it.status().ok()) return RocksdbError("reading the users' source indexes", it.status());
  return step;
}

}  // namespace nbspamd::storage
