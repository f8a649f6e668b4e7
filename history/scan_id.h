// Scan ids: 20 lower-case hex digits, the classification's Unix time in milliseconds (12 digits)
// then 8 digits that set apart the scans of one millisecond (a per-process random half and a
// counter). Ids sort by time as strings, so the history's keys are in time order and an id says
// when its scan was made (an id older than the history keeps is known to have aged out).
#ifndef NBSPAMD_HISTORY_SCAN_ID_H_
#define NBSPAMD_HISTORY_SCAN_ID_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nbspamd::history {

inline constexpr std::size_t kScanIdLength = 20;

// Makes scan ids. Thread-safe; ids from one generator do not repeat (unless it makes more than
// 65,536 in one millisecond).
class ScanIdGenerator {
 public:
  // `salt` sets the random half apart between processes (a random number in the daemon).
  explicit ScanIdGenerator(std::uint32_t salt);

  [[nodiscard]] std::string Next(std::int64_t time_ms);

 private:
  std::uint32_t salt_;
  std::atomic<std::uint32_t> counter_{0};
};

// The Unix time in milliseconds of a scan id; nullopt when `id` is not one (wrong length or a
// character that is not a lower-case hex digit).
[[nodiscard]] std::optional<std::int64_t> ScanIdTime(std::string_view id);

// The smallest scan id of `time_ms` (every id of a later time sorts after it).
[[nodiscard]] std::string FirstScanIdAt(std::int64_t time_ms);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_ID_H_
