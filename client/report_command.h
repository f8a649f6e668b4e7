// `nbspamc report`: a user's verdict on one message, for the programs a mail store runs when a
// user sorts mail (contrib/dovecot: Dovecot's IMAPSieve pipes a message moved into Junk as spam,
// one moved out of Junk as ham). docs/DOVECOT.md has the whole set-up.
//
//   nbspamc report --label spam --user alice@example.org < message
//
// The message is posted to /train?label=LABEL&user=USER. A message that carries nbspamd's scan
// header is learned by the daemon as the bag of that scan (history/scan_header.h), so the copy a
// user moves is learned as exactly what was classified; either way the ledger makes it
// idempotent, and a later report with the other label relearns it.
//
// A report must never hold up the user's move: unless --strict, every failure (daemon down, no
// answer within the deadline, the daemon's error, a message too large or unreadable) is logged
// on `err` and to syslog (facility mail) and the exit status is 0. With --strict the statuses
// of client/exit_codes.h apply.
#ifndef NBSPAMD_CLIENT_REPORT_COMMAND_H_
#define NBSPAMD_CLIENT_REPORT_COMMAND_H_

#include <cstdio>
#include <string>

#include "client/command_line.h"
#include "client/connect_options.h"

namespace nbspamd::client {

// Runs `report`: on success prints the daemon's outcome ("spam learned alice 3f1c…") on `out`.
[[nodiscard]] int RunReport(const ClientOptions& options, const ConnectOptions& connect,
                            std::FILE* out, std::FILE* err);

// The request target of a report: /train with the label and, when given, the user.
[[nodiscard]] std::string ReportTarget(const ClientOptions& options);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_REPORT_COMMAND_H_
