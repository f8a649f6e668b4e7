// The commands of nbspamc that read the daemon's scan history (docs/API.md "Scan history"):
// `history` lists the scans, newest first, with filters; `scan` shows one with the tokens that
// weighed most. With `train --scan-id` (bulk_command.h) they are the administrator's loop at a
// shell: find the message a user asks about, see why, teach the filter. Each prints on `out`
// and problems on `err`, and returns the exit status (client/exit_codes.h).
#ifndef NBSPAMD_CLIENT_HISTORY_COMMANDS_H_
#define NBSPAMD_CLIENT_HISTORY_COMMANDS_H_

#include <boost/json/value.hpp>
#include <cstdint>
#include <cstdio>
#include <string>

#include "client/command_line.h"
#include "client/connect_options.h"

namespace nbspamd::client {

// `nbspamc history`: up to options.limit scans that pass the filters, newest first, a line each
// after a header line (or, with --json, one JSON object: "scans" and the "next" cursor). Follows
// the daemon's pages until it has them (a page reads at most 10,000 scans, so a rare filter may
// take a few), printing each as it comes: memory stays one page's. `now_ms`: the Unix time
// --since counts back from. On an error part of the list may have been printed.
[[nodiscard]] int RunHistory(const ClientOptions& options, const ConnectOptions& connect,
                             std::int64_t now_ms, std::FILE* out, std::FILE* err);

// `nbspamc scan SCAN`: one scan and its explanation (the daemon's JSON answer with --json).
[[nodiscard]] int RunScan(const ClientOptions& options, const ConnectOptions& connect,
                          std::FILE* out, std::FILE* err);

// The /history query for `options` (without the page cursor and limit).
[[nodiscard]] std::string HistoryQuery(const ClientOptions& options, std::int64_t now_ms);

// The header line of `history`, and one scan of a /history page as a line under it: scan id,
// time (UTC), verdict, score, front end, user, From domain, Message-ID, Subject ("-" for what is
// absent or not kept; text from mail made TerminalSafe).
[[nodiscard]] std::string HistoryHeader();
[[nodiscard]] std::string FormatScanLine(const boost::json::value& scan);

// A /history/{id} answer as readable lines: the summary, its facts, then one line per
// explaining token as `classify --explain` prints them.
[[nodiscard]] std::string FormatScan(const boost::json::value& scan);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_HISTORY_COMMANDS_H_
