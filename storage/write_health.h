// WriteHealth: whether a store can take writes now and, when it cannot, why. A store that met a
// fault of the machine (a full disk, an I/O error, a file system remounted read-only) stops
// writing until Store::Recover succeeds, and keeps serving reads from memory meanwhile.
#ifndef NBSPAMD_STORAGE_WRITE_HEALTH_H_
#define NBSPAMD_STORAGE_WRITE_HEALTH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nbspamd::storage {

// The faults a write can meet, by what an administrator does about them.
enum class WriteFault {
  kDiskFull,  // ENOSPC: free space in the data folder's file system.
  kIoError,   // EIO and other failures of the device or its driver.
  kReadOnly,  // EROFS: the file system was remounted read-only.
};
inline constexpr std::size_t kWriteFaultCount = 3;

// "disk_full", "io_error", "read_only": the `kind` label of the write-error counter.
[[nodiscard]] constexpr std::string_view WriteFaultName(WriteFault fault) {
  switch (fault) {
    case WriteFault::kDiskFull:
      return "disk_full";
    case WriteFault::kIoError:
      return "io_error";
    case WriteFault::kReadOnly:
      return "read_only";
  }
  return "io_error";
}

struct WriteHealth {
  bool writable = true;
  WriteFault fault = WriteFault::kIoError;  // Meaningful only when !writable.
  // For people, when !writable: what failed and what brings writes back ("disk full: ...").
  std::string reason;
  // Failed writes since the store was opened, by WriteFault; each stops writes.
  std::array<std::uint64_t, kWriteFaultCount> errors{};
  std::uint64_t recoveries = 0;  // Times writes resumed after a fault.
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_WRITE_HEALTH_H_
