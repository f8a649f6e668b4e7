#include "client/report_command.h"

#include <syslog.h>

#include <boost/beast/http/verb.hpp>
#include <boost/json/parse.hpp>

#include "client/exit_codes.h"
#include "client/http_connection.h"
#include "client/simple_commands.h"

namespace nbspamd::client {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

// A field of the daemon's JSON answer, "-" when missing.
std::string Field(const json::value& answer, const char* name) {
  const json::value* value = answer.is_object() ? answer.as_object().if_contains(name) : nullptr;
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : "-";
}

// Logs why the message was not learned, on `err` and to syslog; the exit status to return.
int NotLearned(const ClientOptions& options, std::FILE* err, const std::string& why, int status) {
  const std::string who = options.user ? " for " + *options.user : "";
  std::fprintf(err, "nbspamc: report: %s%s not learned: %s\n", options.label.c_str(), who.c_str(),
               why.c_str());
  ::openlog("nbspamc", LOG_PID, LOG_MAIL);
  ::syslog(LOG_WARNING, "report: %s%s not learned: %s", options.label.c_str(), who.c_str(),
           why.c_str());
  ::closelog();
  return options.strict ? status : kExitOk;
}

}  // namespace

std::string ReportTarget(const ClientOptions& options) {
  std::string target = "/train?label=" + PercentEncode(options.label);
  if (options.user) target += "&user=" + PercentEncode(*options.user);
  return target;
}

int RunReport(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
              std::FILE* err) {
  auto message = ReadInput(options.paths.front());
  if (!message) return NotLearned(options, err, message.error().message, kExitUsage);
  if (message->size() > options.max_message_bytes) {
    return NotLearned(options, err,
                      "the message has " + std::to_string(message->size()) +
                          " bytes, more than --max-size " +
                          std::to_string(options.max_message_bytes),
                      kExitUsage);
  }
  auto reply = connect.Open()->Send(http::verb::post, ReportTarget(options), *message);
  if (!reply) return NotLearned(options, err, reply.error().message, kExitUnreachable);
  if (reply->status != 200) return NotLearned(options, err, ErrorMessage(*reply), kExitDaemonError);
  boost::system::error_code ec;
  const json::value answer = json::parse(reply->body, ec);
  std::fprintf(out, "%s %s %s %s\n", Field(answer, "label").c_str(),
               Field(answer, "status").c_str(), options.user ? options.user->c_str() : "-",
               Field(answer, "id").c_str());
  return kExitOk;
}

}  // namespace nbspamd::client
