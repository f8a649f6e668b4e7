// What the one-request commands of nbspamc share: asking the daemon once and reading its JSON
// answer, with problems printed for people, and the JSON values shown as text.
#ifndef NBSPAMD_CLIENT_DAEMON_ANSWER_H_
#define NBSPAMD_CLIENT_DAEMON_ANSWER_H_

#include <boost/beast/http/verb.hpp>
#include <boost/json/value.hpp>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "client/connect_options.h"
#include "client/http_connection.h"

namespace nbspamd::client {

// Sends one request on a new connection. A 200 answer is returned; otherwise why is printed on
// `err` and `status` is set to the exit status (kExitUnreachable when no answer came,
// kExitDaemonError for the daemon's error).
[[nodiscard]] std::optional<HttpReply> RequestOnce(const ConnectOptions& connect,
                                                   boost::beast::http::verb method,
                                                   const std::string& target,
                                                   const std::string& body, std::FILE* err,
                                                   int& status);

// The answer as a JSON object; nothing (with a line on `err`) when it is not one.
[[nodiscard]] std::optional<boost::json::value> ParseAnswer(const std::string& body,
                                                            std::FILE* err);

// RequestOnce, then its answer printed on `out`: as the daemon sent it with `raw`, else as
// `format` writes it. Returns the answer; nothing, with `status` set, when there is none to
// print (why is on `err`).
[[nodiscard]] std::optional<boost::json::value> RequestAndPrint(
    const ConnectOptions& connect, boost::beast::http::verb method, const std::string& target,
    const std::string& body, bool raw,
    const std::function<std::string(const boost::json::value&)>& format, std::FILE* out,
    std::FILE* err, int& status);

// A JSON number with `digits` decimals; "-" for null, a missing value or another kind.
[[nodiscard]] std::string NumberText(const boost::json::value* value, int digits);

// A JSON value as text: a string as it is, a number as people write it (0.04, 1), "-" when
// missing. Not escaped: see TerminalSafe for text from mail.
[[nodiscard]] std::string ValueText(const boost::json::value* value);

// `text` with every control character (C0, DEL, C1) written as \xNN, so that text from mail
// (a Subject, a Message-ID) printed on a terminal can neither move the cursor nor change colours.
// Invalid UTF-8 is left to the daemon, which sends none.
[[nodiscard]] std::string TerminalSafe(std::string_view text);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_DAEMON_ANSWER_H_
