// ReplaceFile: writes a small file whole or not at all: a temporary file beside it ("<path>.new"),
// synced, renamed over `path`, and the folder synced, so that a crash or a full disk leaves
// either the old file or the new one, never a part. For the daemon's own small state files
// (the live settings, the activity).
//
//   if (auto written = ReplaceFile(path, text); !written) LogWarning(written.error().message);
//
// Thread-safe for different paths; callers serialise writes of one path.
#ifndef NBSPAMD_COMMON_FILE_REPLACE_H_
#define NBSPAMD_COMMON_FILE_REPLACE_H_

#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd {

// Errors: kUnavailable naming the file, the step and the system's reason (disk full, read-only
// folder, ...); the old file is then unchanged and no temporary file is left.
[[nodiscard]] std::expected<void, Error> ReplaceFile(const std::string& path,
                                                     std::string_view contents);

// Removes the file at `path` (none there is fine) and syncs its folder. Errors: as ReplaceFile.
[[nodiscard]] std::expected<void, Error> RemoveFile(const std::string& path);

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_FILE_REPLACE_H_
