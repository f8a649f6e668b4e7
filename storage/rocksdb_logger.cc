#include "storage/rocksdb_logger.h"

#include <cstdio>

namespace nbspamd::storage {

void RocksdbLogger::Logv(const char* format, va_list arguments) {
  if (!sink_) return;
  char line[1024];
  const int length = std::vsnprintf(line, sizeof line, format, arguments);
  if (length < 0) return;
  std::string_view text(line,
                        std::min<std::size_t>(static_cast<std::size_t>(length), sizeof line - 1));
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  sink_(text);
}

}  // namespace nbspamd::storage
