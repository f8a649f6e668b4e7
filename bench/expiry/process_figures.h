// What the year-of-mail benchmark samples of the process and its folder: bytes on disk below a
// folder, and the process's resident set.
#ifndef NBSPAMD_BENCH_EXPIRY_PROCESS_FIGURES_H_
#define NBSPAMD_BENCH_EXPIRY_PROCESS_FIGURES_H_

#include <cstdint>
#include <expected>
#include <string>

#include "common/error.h"

namespace nbspamd::bench {

// The sum of the sizes of the regular files below `folder` (a RocksDB folder: its table files,
// write-ahead log, manifest and options). Errors: kInternal when the folder cannot be read.
[[nodiscard]] std::expected<std::uint64_t, Error> FolderBytes(const std::string& folder);

// This process's resident set (VmRSS of /proc/self/status), in bytes; 0 where there is none.
[[nodiscard]] std::uint64_t ResidentBytes();

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_EXPIRY_PROCESS_FIGURES_H_
