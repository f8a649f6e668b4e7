// MailManifest: the labelled messages the year-of-mail benchmark replays, in arrival order, as
// bench/expiry/year.py lists them (one "spam<TAB>PATH" or "ham<TAB>PATH" line each). The
// messages stay on disk and are read one at a time, so the process's resident set is the
// filter's, not the corpus's.
#ifndef NBSPAMD_BENCH_EXPIRY_MAIL_MANIFEST_H_
#define NBSPAMD_BENCH_EXPIRY_MAIL_MANIFEST_H_

#include <expected>
#include <string>
#include <vector>

#include "common/error.h"

namespace nbspamd::bench {

struct ManifestEntry {
  bool spam = false;
  std::string path;
};

// The entries of the manifest file `path`, in its order. Errors: kInternal when it cannot be
// read; kInvalidArgument for a line of another shape, or no line at all.
[[nodiscard]] std::expected<std::vector<ManifestEntry>, Error> ReadManifest(
    const std::string& path);

// The bytes of the message file `path`. Errors: kInternal when it cannot be read.
[[nodiscard]] std::expected<std::string, Error> ReadMessage(const std::string& path);

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_EXPIRY_MAIL_MANIFEST_H_
