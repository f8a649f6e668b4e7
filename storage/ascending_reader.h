// AscendingReader: point reads of keys asked for in ascending order, with one RocksDB iterator.
//
//   AscendingReader seen(db, family, read_options);
//   for (const std::string& key : keys_in_order) {
//     auto value = seen.Find(key);   // the value, nullopt when absent, or RocksDB's error
//   }
//
// A pass that reads one family's records in key order and looks each up in another (a token's
// base counts, then its counts and last-seen time) pays a Get for each, a search of the memory
// table and of every level. Here a key a few records past the last one found is reached with
// Next, which costs a fraction of that; a key further away with one Seek.
#ifndef NBSPAMD_STORAGE_ASCENDING_READER_H_
#define NBSPAMD_STORAGE_ASCENDING_READER_H_

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::storage {

// Reads what the iterator of `family` sees (the database as it is when it is made, or the
// snapshot of `options`). Keys asked in another order are still found, each with a Seek. A value
// returned is valid until the next Find. Not thread-safe; one per pass.
class AscendingReader {
 public:
  AscendingReader(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family,
                  const rocksdb::ReadOptions& options);

  // The value stored under `key`; nullopt when there is none. Errors: RocksDB's, as RocksdbError
  // makes them (kDataLoss for corruption), about `what`.
  [[nodiscard]] std::expected<std::optional<std::string_view>, Error> Find(std::string_view key,
                                                                           std::string_view what);

 private:
  // Once positioned_, it_ is at the first key >= last_ (or at the end): a key asked after last_
  // and before that one is not there.
  std::unique_ptr<rocksdb::Iterator> it_;
  bool positioned_ = false;
  std::string last_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ASCENDING_READER_H_
