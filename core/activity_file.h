// The activity's file: an ActivityWindow's Snapshot kept in the data folder (`activity`), so that
// the console's day and month survive a restart. A small text file, one line per period with
// events (at most 1,068 lines, about 150 KB), written whole (common/file_replace.h) once a
// minute and when the daemon stops; a crash loses at most the last minute.
//
//   nbspamd-activity 1
//   <range> <period> <7 counts> <25 classify latency buckets> <25 train latency buckets>
//
// Plain functions; thread-safe for different paths.
#ifndef NBSPAMD_CORE_ACTIVITY_FILE_H_
#define NBSPAMD_CORE_ACTIVITY_FILE_H_

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "core/activity.h"

namespace nbspamd::core {

inline constexpr std::string_view kActivityFile = "activity";

// The snapshot as the file's text, and back. ParseActivity errors: kDataLoss naming the line
// that is not one of the format.
[[nodiscard]] std::string ActivityText(const std::vector<ActivitySlotCounts>& saved);
[[nodiscard]] std::expected<std::vector<ActivitySlotCounts>, Error> ParseActivity(
    std::string_view text);

// Reads the snapshot at `path`; none when there is no file. Errors: kDataLoss (naming the file)
// for a file that cannot be read or parsed.
[[nodiscard]] std::expected<std::vector<ActivitySlotCounts>, Error> ReadActivity(
    const std::string& path);
// Writes `saved` to `path` whole or not at all. Errors: as ReplaceFile.
[[nodiscard]] std::expected<void, Error> WriteActivity(
    const std::string& path, const std::vector<ActivitySlotCounts>& saved);

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_ACTIVITY_FILE_H_
