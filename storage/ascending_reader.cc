#include "storage/ascending_reader.h"

#include "storage/rocksdb_status.h"

namespace nbspamd::storage {
namespace {

// Nexts tried before a Seek: a Next is a step of a merge of a few sorted runs, a Seek a search
// of each run, so a handful of Nexts is still cheaper.
constexpr int kMaxNexts = 8;

}  // namespace

AscendingReader::AscendingReader(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family,
                                 const rocksdb::ReadOptions& options)
    : it_(db.NewIterator(options, family)) {}

std::expected<std::optional<std::string_view>, Error> AscendingReader::Find(std::string_view key,
                                                                            std::string_view what) {
  const rocksdb::Slice target(key.data(), key.size());
  if (positioned_ && key >= last_) {
    for (int i = 0; i < kMaxNexts && it_->Valid() && it_->key().compare(target) < 0; ++i) {
      it_->Next();
    }
    if (it_->Valid() && it_->key().compare(target) < 0) it_->Seek(target);
  } else {
    it_->Seek(target);
  }
  positioned_ = true;
  last_.assign(key);
  if (!it_->Valid()) {
    if (!it_->status().ok()) return RocksdbError(what, it_->status());
    return std::nullopt;
  }
  if (it_->key() != target) return std::nullopt;
  return std::string_view(it_->value().data(), it_->value().size());
}

}  // namespace nbspamd::storage
