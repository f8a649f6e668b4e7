// RocksdbLogger: RocksDB's diagnostic log, sent to the daemon's own log instead of a LOG file in
// the data folder. A LOG file shares the data folder's disk: on a full disk its first failed
// write leaves the file in an error state, and RocksDB 7 asserts when it logs the write error
// itself into that file. Only warnings and errors are passed on.
//
// Thread safety: RocksDB calls it from any of its threads; `sink` must be thread-safe.
#ifndef NBSPAMD_STORAGE_ROCKSDB_LOGGER_H_
#define NBSPAMD_STORAGE_ROCKSDB_LOGGER_H_

#include <rocksdb/env.h>

#include <cstdarg>
#include <functional>
#include <string_view>

namespace nbspamd::storage {

// Takes one line of RocksDB's log (without the newline).
using RocksdbLogSink = std::function<void(std::string_view line)>;

class RocksdbLogger final : public rocksdb::Logger {
 public:
  // `sink` empty: the lines are dropped.
  explicit RocksdbLogger(RocksdbLogSink sink)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), sink_(std::move(sink)) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list arguments) override;

 private:
  RocksdbLogSink sink_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_ROCKSDB_LOGGER_H_
