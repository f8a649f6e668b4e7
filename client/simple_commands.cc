#include "client/simple_commands.h"

#include <boost/beast/http/verb.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "client/daemon_answer.h"
#include "client/exit_codes.h"
#include "client/http_connection.h"

namespace nbspamd::client {
namespace http = boost::beast::http;
namespace json = boost::json;

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
  std::string text = VerdictOf(answer) + " " + NumberText(o.if_contains("probability"), 4) +
                     " score=" + NumberText(o.if_contains("score"), 4);
  const json::value* confidence = o.if_contains("spam_confidence");
  if (confidence != nullptr && confidence->is_number())
    text += " confidence=" + NumberText(confidence, 4);
  text += "\n";
  return text + FormatExplanations(o.if_contains("explain"));
}

std::string FormatExplanations(const json::value* explain) {
  std::string text;
  if (explain == nullptr || !explain->is_array()) return text;
  for (const json::value& item : explain->as_array()) {
    if (!item.is_object()) continue;
    const json::object& e = item.as_object();
    const json::value* weight = e.if_contains("weight");
    std::string signed_weight = NumberText(weight, 4);
    if (weight != nullptr && weight->is_number() && weight->to_number<double>() >= 0) {
      signed_weight = "+" + signed_weight;
    }
    text += "  " + signed_weight + " " + ValueText(e.if_contains("source")) + " " +
            TerminalSafe(ValueText(e.if_contains("token"))) + " x" +
            ValueText(e.if_contains("count")) + "\n";
  }
  return text;
}

std::string FormatStats(const json::value& answer) {
  const json::object& o = answer.as_object();
  std::string text = "documents: " + ValueText(o.if_contains("documents")) + "\n";
  if (const json::value* classes = o.if_contains("classes"); classes && classes->is_array()) {
    for (const json::value& item : classes->as_array()) {
      if (!item.is_object()) continue;
      const json::object& c = item.as_object();
      text += "  " + ValueText(c.if_contains("label")) + ": " +
              ValueText(c.if_contains("documents")) + " documents, " +
              ValueText(c.if_contains("tokens")) + " tokens\n";
    }
  }
  text += "vocabulary: " + ValueText(o.if_contains("vocabulary")) + " distinct tokens\n";
  text += "alpha: " + ValueText(o.if_contains("alpha")) + "\n";
  text += "spam_threshold: " + ValueText(o.if_contains("spam_threshold")) + "\n";
  if (const json::value* ham = o.if_contains("ham_threshold")) {
    text += "ham_threshold: " + ValueText(ham) + "\n";
  }
  if (const json::value* min_weight = o.if_contains("score_min_weight")) {
    text += "score_min_weight: " + ValueText(min_weight) + "\n";
  }
  if (const json::value* share = o.if_contains("char_ngram_share")) {
    text += "char_ngram_share: " + ValueText(share) + "\n";
  }
  // The training regime: null counts every message (docs/API.md "Training regime").
  if (const json::value* margin = o.if_contains("train_margin")) {
    text += "train_margin: " +
            (margin->is_null() ? std::string("none (every message counted)") : ValueText(margin)) +
            "\n";
  }
  // The thresholds in force and where they come from (docs/API.md "GET /stats").
  if (const json::value* t = o.if_contains("verdict_thresholds"); t && t->is_object()) {
    const json::object& thresholds = t->as_object();
    text += "verdict_thresholds: " + ValueText(thresholds.if_contains("mode")) + ", ham " +
            ValueText(thresholds.if_contains("ham")) + " / spam " +
            ValueText(thresholds.if_contains("spam")) + " in force";
    if (const json::value* f = thresholds.if_contains("feedback"); f && f->is_object()) {
      const json::object& feedback = f->as_object();
      text += "; feedback gives ham " + ValueText(feedback.if_contains("ham")) + " / spam " +
              ValueText(feedback.if_contains("spam")) + " from " +
              ValueText(feedback.if_contains("hams")) + " hams and " +
              ValueText(feedback.if_contains("spams")) + " spams (of " +
              ValueText(feedback.if_contains("window")) + " each)";
    }
    text += "\n";
  }
  if (const json::value* options = o.if_contains("options"); options && options->is_object()) {
    text += "tokenizer:";
    for (const auto& [key, value] : options->as_object()) {
      text.append(" ").append(key).append("=").append(ValueText(&value));
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
  const auto answer = RequestAndPrint(connect, http::verb::post, target, *message, options.json,
                                      FormatVerdict, out, err, status);
  if (!answer) return status;
  return VerdictOf(*answer) == "spam" ? kExitSpam : kExitHam;
}

int RunStats(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
             std::FILE* err) {
  int status = kExitOk;
  const auto answer = RequestAndPrint(connect, http::verb::get, "/stats", "", options.json,
                                      FormatStats, out, err, status);
  return answer ? kExitOk : status;
}

}  // namespace nbspamd::client
