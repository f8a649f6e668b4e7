#include "client/simple_commands.h"

#include <boost/beast/http/verb.hpp>
#include <boost/json/parse.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "client/exit_codes.h"
#include "client/http_connection.h"
#include "common/json_text.h"

namespace nbspamd::client {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

// A JSON number with `digits` decimals, "-" for null or a missing value.
std::string Number(const json::value* value, int digits) {
  if (value == nullptr || !value->is_number()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value->to_number<double>());
  return text;
}

std::string Text(const json::value* value) {
  if (value == nullptr) return "-";
  if (value->is_string()) return std::string(value->as_string());
  return WriteJson(*value);  // Numbers as people write them: 0.04, 1.
}

// Sends one request; on failure prints why and sets `status` to the exit status.
std::optional<HttpReply> Request(const ConnectOptions& connect, http::verb method,
                                 const std::string& target, const std::string& body, std::FILE* err,
                                 int& status) {
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

// Parses an answer that must be a JSON object.
std::optional<json::value> ParseAnswer(const std::string& body, std::FILE* err) {
  boost::system::error_code ec;
  json::value answer = json::parse(body, ec);
  if (ec || !answer.is_object()) {
    std::fprintf(err, "nbspamc: the daemon's answer is not a JSON object\n");
    return std::nullopt;
  }
  return answer;
}

}  // namespace

std::expected<std::string, Error> ReadInput(const std::string& path) {
  std::ostringstream content;
  if (path == "-") {
    content << std::cin.rdbuf();
    if (std::cin.bad()) return MakeError(ErrorCode::kInvalidArgument, "cannot read standard input");
    return content.str();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kNotFound, "cannot open " + path);
  content << file.rdbuf();
  if (file.bad()) return MakeError(ErrorCode::kInvalidArgument, "cannot read " + path);
  return content.str();
}

std::string VerdictOf(const json::value& answer) {
  const json::object& o = answer.as_object();
  const json::value* verdict = o.if_contains("verdict");
  if (verdict != nullptr && verdict->is_string()) return std::string(verdict->as_string());
  // A daemon from before the three-way verdict: its label was its verdict.
  const json::value* label = o.if_contains("label");
  if (label != nullptr && label->is_string()) return std::string(label->as_string());
  return "-";
}

std::string FormatVerdict(const json::value& answer) {
  const json::object& o = answer.as_object();
  std::string text = VerdictOf(answer) + " " + Number(o.if_contains("probability"), 4) +
                     " score=" + Number(o.if_contains("score"), 4);
  const json::value* confidence = o.if_contains("spam_confidence");
  if (confidence != nullptr && confidence->is_number())
    text += " confidence=" + Number(confidence, 4);
  text += "\n";
  const json::value* explain = o.if_contains("explain");
  if (explain == nullptr || !explain->is_array()) return text;
  for (const json::value& item : explain->as_array()) {
    if (!item.is_object()) continue;
    const json::object& e = item.as_object();
    const json::value* weight = e.if_contains("weight");
    std::string signed_weight = Number(weight, 4);
    if (weight != nullptr && weight->is_number() && weight->to_number<double>() >= 0) {
      signed_weight = "+" + signed_weight;
    }
    text += "  " + signed_weight + " " + Text(e.if_contains("source")) + " " +
            Text(e.if_contains("token")) + " x" + Text(e.if_contains("count")) + "\n";
  }
  return text;
}

std::string FormatStats(const json::value& answer) {
  const json::object& o = answer.as_object();
  std::string text = "documents: " + Text(o.if_contains("documents")) + "\n";
  if (const json::value* classes = o.if_contains("classes"); classes && classes->is_array()) {
    for (const json::value& item : classes->as_array()) {
      if (!item.is_object()) continue;
      const json::object& c = item.as_object();
      text += "  " + Text(c.if_contains("label")) + ": " + Text(c.if_contains("documents")) +
              " documents, " + Text(c.if_contains("tokens")) + " tokens\n";
    }
  }
  text += "vocabulary: " + Text(o.if_contains("vocabulary")) + " distinct tokens\n";
  text += "alpha: " + Text(o.if_contains("alpha")) + "\n";
  text += "spam_threshold: " + Text(o.if_contains("spam_threshold")) + "\n";
  if (const json::value* ham = o.if_contains("ham_threshold")) {
    text += "ham_threshold: " + Text(ham) + "\n";
  }
  if (const json::value* min_weight = o.if_contains("score_min_weight")) {
    text += "score_min_weight: " + Text(min_weight) + "\n";
  }
  if (const json::value* options = o.if_contains("options"); options && options->is_object()) {
    text += "tokenizer:";
    for (const auto& [key, value] : options->as_object()) {
      text.append(" ").append(key).append("=").append(Text(&value));
    }
    text += "\n";
  }
  return text;
}

int RunClassify(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
                std::FILE* err) {
  auto message = ReadInput(options.paths.front());
  if (!message) {
    std::fprintf(err, "nbspamc: %s\n", message.error().message.c_str());
    return kExitUsage;
  }
  std::string target = "/classify";
  if (options.explain > 0) target += "?explain=" + std::to_string(options.explain);
  int status = kExitOk;
  const auto reply = Request(connect, http::verb::post, target, *message, err, status);
  if (!reply) return status;
  const auto answer = ParseAnswer(reply->body, err);
  if (!answer) return kExitDaemonError;
  if (options.json) {
    std::fprintf(out, "%s\n", reply->body.c_str());
  } else {
    std::fputs(FormatVerdict(*answer).c_str(), out);
  }
  return VerdictOf(*answer) == "spam" ? kExitSpam : kExitHam;
}

int RunStats(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
             std::FILE* err) {
  int status = kExitOk;
  const auto reply = Request(connect, http::verb::get, "/stats", "", err, status);
  if (!reply) return status;
  if (options.json) {
    std::fprintf(out, "%s\n", reply->body.c_str());
    return kExitOk;
  }
  const auto answer = ParseAnswer(reply->body, err);
  if (!answer) return kExitDaemonError;
  std::fputs(FormatStats(*answer).c_str(), out);
  return kExitOk;
}

}  // namespace nbspamd::client
