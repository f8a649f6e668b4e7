#include "bench/expiry/process_figures.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace nbspamd::bench {

std::expected<std::uint64_t, Error> FolderBytes(const std::string& folder) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(folder, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    // A file RocksDB deletes between listing and sizing counts as gone.
    if (it->is_regular_file(size_ec)) {
      const std::uintmax_t size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  if (ec) {
    return std::unexpected(Error{ErrorCode::kInternal, folder + ": " + ec.message()});
  }
  return total;
}

std::uint64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("VmRSS:")) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

}  // namespace nbspamd::bench
