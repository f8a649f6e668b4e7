// The commands of nbspamc that make one request: classify and stats. Each prints its result on
// `out` and problems on `err`, and returns the exit status (client/exit_codes.h).
#ifndef NBSPAMD_CLIENT_SIMPLE_COMMANDS_H_
#define NBSPAMD_CLIENT_SIMPLE_COMMANDS_H_

#include <boost/json/value.hpp>
#include <cstdio>
#include <expected>
#include <string>

#include "client/command_line.h"
#include "client/connect_options.h"
#include "common/error.h"

namespace nbspamd::client {

// `nbspamc classify FILE|-`: the verdict line (or the JSON answer with --json); exit kExitSpam
// for a spam verdict, kExitHam for ham and unsure (like spamc -c: only spam is 1).
[[nodiscard]] int RunClassify(const ClientOptions& options, const ConnectOptions& connect,
                              std::FILE* out, std::FILE* err);

// `nbspamc stats`: the model's statistics, readable (or the JSON answer with --json).
[[nodiscard]] int RunStats(const ClientOptions& options, const ConnectOptions& connect,
                           std::FILE* out, std::FILE* err);

// The verdict of a /classify answer: its "verdict" (spam, unsure or ham), or its "label" when it
// has none (a daemon from before the three-way verdict); "-" when it has neither.
// REQUIRES: `answer` is an object.
[[nodiscard]] std::string VerdictOf(const boost::json::value& answer);

// One line for a /classify answer: the verdict, P(spam) and the score, and the calibrated
// spam_confidence when the daemon gives one, as in "unsure 0.9994 score=0.0178
// confidence=0.8512"; then with explanations one line per token: "  +3.1000 body viagra x2".
[[nodiscard]] std::string FormatVerdict(const boost::json::value& answer);

// The lines of an answer's "explain" array (of /classify or /history/{id}), one per token:
// "  +3.1000 body viagra x2" (tokens made TerminalSafe). "" without one.
[[nodiscard]] std::string FormatExplanations(const boost::json::value* explain);

// The contents of FILE, or of standard input for "-". kNotFound when FILE cannot be opened,
// kInvalidArgument when it cannot be read.
[[nodiscard]] std::expected<std::string, Error> ReadInput(const std::string& path);

// The /stats answer as readable lines.
[[nodiscard]] std::string FormatStats(const boost::json::value& answer);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_SIMPLE_COMMANDS_H_
