// `nbspamc train` and `nbspamc forget`: every message under the PATHs, sent by --jobs worker
// threads (each with its own keep-alive connection) from a bounded queue that one reader thread
// fills from a MessageSource, with a progress display on standard error and a summary line on
// standard output.
//
// A message that cannot be read, is too large, or that the daemon refuses fails alone: the
// others go on, the first few failures are reported with their paths, and the exit status is
// kExitDaemonError. The run stops at once when the daemon cannot be reached (kExitUnreachable)
// or refuses the token (401/403: kExitDaemonError). 429 and 503 answers are retried a few times
// after the daemon's Retry-After.
#ifndef NBSPAMD_CLIENT_BULK_COMMAND_H_
#define NBSPAMD_CLIENT_BULK_COMMAND_H_

#include <cstdio>

#include "client/command_line.h"
#include "client/connect_options.h"

namespace nbspamd::client {

// Runs options.command (kTrain or kForget); `progress_in_place` when `err` is a terminal.
[[nodiscard]] int RunBulk(const ClientOptions& options, const ConnectOptions& connect,
                          std::FILE* out, std::FILE* err, bool progress_in_place);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_BULK_COMMAND_H_
