// CompactFolder: a full compaction of every column family of a closed RocksDB folder, so that
// its size is that of the live data, without the deleted and overwritten records a daemon's
// background compactions have not reached yet.
#ifndef NBSPAMD_BENCH_EXPIRY_COMPACT_FOLDER_H_
#define NBSPAMD_BENCH_EXPIRY_COMPACT_FOLDER_H_

#include <expected>
#include <string>

#include "common/error.h"

namespace nbspamd::bench {

// REQUIRES: no process has the folder open. Errors: kInternal with RocksDB's message.
[[nodiscard]] std::expected<void, Error> CompactFolder(const std::string& path);

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_EXPIRY_COMPACT_FOLDER_H_
