#include "client/daemon_answer.h"

#include <boost/json/parse.hpp>

#include "client/exit_codes.h"
#include "common/json_text.h"

namespace nbspamd::client {
namespace json = boost::json;

std::optional<HttpReply> RequestOnce(const ConnectOptions& connect, boost::beast::http::verb method,
                                     const std::string& target, const std::string& body,
                                     std::FILE* err, int& status) {
  auto reply = connect.Open()->Send(method, target, body);
  if (!reply) {
    std::fprintf(err, "nbspamc: %s\n", reply.error().message.c_str());
    status = kExitUnreachable;
    return std::nullopt;
  }
  if (reply->status != 200) {
    std::fprintf(err, "nbspamc: %s\n", ErrorMessage(*reply).c_str());
    status = kExitDaemonError;
    return std::nullopt;
  }
  return std::move(*reply);
}

std::optional<json::value> ParseAnswer(const std::string& body, std::FILE* err) {
  boost::system::error_code ec;
  json::value answer = json::parse(body, ec);
  if (ec || !answer.is_object()) {
    std::fprintf(err, "nbspamc: the daemon's answer is not a JSON object\n");
    return std::nullopt;
  }
  return answer;
}

std::optional<json::value> RequestAndPrint(
    const ConnectOptions& connect, boost::beast::http::verb method, const std::string& target,
    const std::string& body, bool raw, const std::function<std::string(const json::value&)>& format,
    std::FILE* out, std::FILE* err, int& status) {
  const auto reply = RequestOnce(connect, method, target, body, err, status);
  if (!reply) return std::nullopt;
  auto answer = ParseAnswer(reply->body, err);
  if (!answer) {
    status = kExitDaemonError;
    return std::nullopt;
  }
  if (raw) {
    std::fprintf(out, "%s\n", reply->body.c_str());
  } else {
    std::fputs(format(*answer).c_str(), out);
  }
  return answer;
}

std::string NumberText(const json::value* value, int digits) {
  if (value == nullptr || !value->is_number()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value->to_number<double>());
  return text;
}

std::string ValueText(const json::value* value) {
  if (value == nullptr || value->is_null()) return "-";
  if (value->is_string()) return std::string(value->as_string());
  return WriteJson(*value);
}

std::string TerminalSafe(std::string_view text) {
  std::string safe;
  safe.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    // C1 controls are U+0080..U+009F: the two bytes C2 80..C2 9F in UTF-8.
    const bool c1 = byte == 0xC2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (byte < 0x20 || byte == 0x7F || c1) {
      const unsigned code = c1 ? static_cast<unsigned char>(text[++i]) : byte;
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", code);
      safe += escaped;
    } else {
      safe += static_cast<char>(byte);
    }
  }
  return safe;
}

}  // namespace nbspamd::client
