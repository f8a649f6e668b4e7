// The command line of nbspamc: a command, its flags, and the NBSPAMC_* environment.
//
//   nbspamc [COMMON FLAGS] COMMAND [FLAGS] [ARGS]
//   auto parsed = ParseCommandLine(args, environment);
//   if (!parsed) { usage error: exit 2 }
//
// Flags override the environment, which overrides the defaults. docs/CLIENT.md lists them all.
#ifndef NBSPAMD_CLIENT_COMMAND_LINE_H_
#define NBSPAMD_CLIENT_COMMAND_LINE_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace nbspamd::client {

enum class Command { kClassify, kTrain, kForget, kStats, kReport, kHistory, kScan };

// The most scans `history --limit` may ask for.
inline constexpr int kMaxHistoryLimit = 100000;

// The per-request deadline of `report` when neither --timeout nor NBSPAMC_TIMEOUT gives one: a
// report runs while a user's IMAP move waits for it.
inline constexpr double kReportTimeoutSeconds = 5;

// Everything a command needs to run.
// train: the PATHs to learn under one label.
struct LabelledPaths {
  std::string label;
  std::vector<std::string> paths;
};

struct ClientOptions {
  Command command = Command::kStats;
  std::string server = "127.0.0.1:7830";      // --server, NBSPAMC_SERVER
  std::string token;                          // --token, NBSPAMC_TOKEN; never printed.
  double timeout_seconds = 30;                // --timeout, NBSPAMC_TIMEOUT; per request.
  bool timeout_given = false;                 // --timeout or NBSPAMC_TIMEOUT was given.
  bool json = false;                          // --json: the daemon's answer unchanged.
  int explain = 0;                            // classify --explain N
  std::string label;                          // train, report --label
  std::optional<std::string> user;            // report, history --user: that user's layer.
  std::optional<std::string> verdict;         // history --verdict: spam, ham or unsure.
  std::optional<std::string> front_end;       // history --front-end: http, milter or spamd.
  std::optional<std::string> query;           // history --query: the daemon's `q`.
  std::optional<std::int64_t> since_seconds;  // history --since: this far back from now.
  int limit = 20;                             // history --limit: scans shown.
  bool strict = false;                        // report --strict: failures are exit statuses.
  std::optional<std::string> id;              // train/forget --id
  std::optional<std::string> scan_id;         // train/forget --scan-id: a scan of the history.
  int jobs = 4;                               // train/forget --jobs: concurrent requests.
  // train --error-driven: each message under the daemon's training regime (no count=all), with
  // passes; by default train is an archive import, every message counted (count=all).
  bool error_driven = false;
  // train --error-driven --passes: the most passes over the PATHs while a daemon under
  // error-driven training still counts some of the messages it only checked before
  // (docs/CLIENT.md).
  int passes = 10;
  bool passes_given = false;                  // --passes was given.
  bool count_all_given = false;               // --count-all (the default) was given.
  std::size_t max_message_bytes = 64u << 20;  // train/forget/report --max-size
  bool progress = true;                       // train/forget: false with --quiet.
  // FILE|- for classify and report, PATH... for train/forget, the scan id for scan.
  std::vector<std::string> paths;
  // train: each --label with the PATHs after it, in order ("--label spam A --label ham B"); with
  // one --label, every PATH, before or after it. `label` is the first one's. A run with several
  // sends their messages in turn, one of each label, so that the daemon's error-driven training
  // sees both classes from the start.
  std::vector<LabelledPaths> groups;
};

// What the command line asks for.
struct ParsedCommandLine {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  ClientOptions options;
  std::string help;  // The text to print for kHelp.
};

// Looks up an environment variable; nothing when it is not set.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

// Parses `args` (without the program name). kInvalidArgument, with a message for people, for an
// unknown command or flag, a missing or bad value, or missing arguments.
[[nodiscard]] std::expected<ParsedCommandLine, Error> ParseCommandLine(
    const std::vector<std::string>& args, const Environment& environment);

// The short usage text printed with usage errors.
[[nodiscard]] std::string UsageText();

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_COMMAND_LINE_H_
