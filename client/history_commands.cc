#include "client/history_commands.h"

#include <algorithm>
#include <boost/beast/http/verb.hpp>
#include <boost/json/serialize.hpp>
#include <cstddef>
#include <string_view>

#include "client/daemon_answer.h"
#include "client/exit_codes.h"
#include "client/http_connection.h"
#include "client/simple_commands.h"
#include "common/utc_time.h"

namespace nbspamd::client {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

// The daemon's largest page (GET /history's `limit`).
constexpr int kMaxPage = 1000;

const json::value* Field(const json::value& object, std::string_view key) {
  return object.is_object() ? object.as_object().if_contains(key) : nullptr;
}

// A field from mail (or a user's name), safe for a terminal; "-" when absent or not kept.
std::string MailText(const json::value* value) { return TerminalSafe(ValueText(value)); }

// "2026-11-29 13:18:03" from a scan's time_ms.
std::string TimeText(const json::value* time_ms) {
  if (time_ms == nullptr || !time_ms->is_number()) return "-";
  std::string text = UtcTimeText(time_ms->to_number<std::int64_t>() / 1000);  // ...T...Z
  if (text.size() == 20) {
    text[10] = ' ';
    text.pop_back();
  }
  return text;
}

std::string SignedScore(const json::value* score) {
  std::string text = NumberText(score, 4);
  if (score != nullptr && score->is_number() && score->to_number<double>() >= 0) text = "+" + text;
  return text;
}

std::string Padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// The scan's learned state (GET /history/{id}'s "learned"), one line: "learned as spam by alice
// at 2026-12-05 03:04:05 UTC (scan_id, 2 changes)", "checked as spam …" for a train the model
// already scored right beyond train_margin, "forgotten …", "not learned" for null; "" without
// the field (a daemon before it).
std::string LearnedLine(const json::value* learned) {
  if (learned == nullptr) return "";
  if (!learned->is_object()) return "not learned\n";
  const std::string state = MailText(Field(*learned, "state"));
  std::string text =
      state == "forgotten" ? "forgotten" : state + " as " + MailText(Field(*learned, "as"));
  if (const json::value* by = Field(*learned, "by"); by != nullptr && by->is_string()) {
    text += " by " + MailText(by);
  }
  std::string at = MailText(Field(*learned, "at"));  // 2026-12-05T03:04:05Z
  if (at.size() == 20 && at[10] == 'T' && at.back() == 'Z') {
    at[10] = ' ';
    at.back() = ' ';
    at += "UTC";
  }
  text += " at " + at + " (" + MailText(Field(*learned, "how"));
  if (const json::value* changes = Field(*learned, "changes");
      changes != nullptr && changes->is_number() && changes->to_number<double>() > 1) {
    text += ", " + ValueText(changes) + " changes";
  }
  text += ")";
  if (state == "checked") {
    text += ": already scored " + MailText(Field(*learned, "as")) +
            " beyond train_margin, so recorded, not counted";
  }
  return text + "\n";
}

}  // namespace

std::string HistoryQuery(const ClientOptions& options, std::int64_t now_ms) {
  std::string query;
  const auto add = [&query](std::string_view key, const std::string& value) {
    query.append(query.empty() ? "?" : "&").append(key).append("=").append(PercentEncode(value));
  };
  if (options.verdict) add("verdict", *options.verdict);
  if (options.user) add("user", *options.user);
  if (options.front_end) add("front_end", *options.front_end);
  if (options.query) add("q", *options.query);
  if (options.since_seconds) {
    add("since", std::to_string(std::max<std::int64_t>(0, now_ms - *options.since_seconds * 1000)));
  }
  return query;
}

std::string HistoryHeader() {
  return Padded("SCAN", 22) + Padded("TIME (UTC)", 21) + Padded("VERDICT", 9) + Padded("SCORE", 9) +
         Padded("VIA", 8) + "USER  FROM  MESSAGE-ID  SUBJECT\n";
}

std::string FormatScanLine(const json::value& scan) {
  const json::value* facts = Field(scan, "facts");
  const auto fact = [facts](std::string_view key) {
    return MailText(facts != nullptr ? Field(*facts, key) : nullptr);
  };
  return Padded(MailText(Field(scan, "scan_id")), 22) +
         Padded(TimeText(Field(scan, "time_ms")), 21) +
         Padded(MailText(Field(scan, "verdict")), 9) +
         Padded(SignedScore(Field(scan, "score")), 9) +
         Padded(MailText(Field(scan, "front_end")), 8) + MailText(Field(scan, "user")) + "  " +
         fact("from_domain") + "  " + fact("message_id") + "  " + fact("subject") + "\n";
}

std::string FormatScan(const json::value& scan) {
  const json::value* facts = Field(scan, "facts");
  const auto fact = [facts](std::string_view key) {
    return MailText(facts != nullptr ? Field(*facts, key) : nullptr);
  };
  std::string text = "scan " + MailText(Field(scan, "scan_id")) + " at " +
                     TimeText(Field(scan, "time_ms")) + " UTC, by " +
                     MailText(Field(scan, "front_end")) + ", user " +
                     MailText(Field(scan, "user")) + "\n";
  text += VerdictOf(scan) + " score=" + NumberText(Field(scan, "score"), 4);
  if (const json::value* confidence = Field(scan, "spam_confidence");
      confidence != nullptr && confidence->is_number()) {
    text += " confidence=" + NumberText(confidence, 4);
  }
  text += " label=" + MailText(Field(scan, "label")) + "\n";
  text += "message " + MailText(Field(scan, "message_key")) + ": " +
          ValueText(Field(scan, "size")) + " bytes, " + ValueText(Field(scan, "tokens")) +
          " tokens, " + ValueText(Field(scan, "bag_tokens")) + " distinct\n";
  text += "from " + fact("from_domain") + ", message-id " + fact("message_id") + ", subject " +
          fact("subject") + ", client " + fact("client") + ", recipients " + fact("recipients") +
          "\n";
  text += LearnedLine(Field(scan, "learned"));
  return text + FormatExplanations(Field(scan, "explain"));
}

int RunHistory(const ClientOptions& options, const ConnectOptions& connect, std::int64_t now_ms,
               std::FILE* out, std::FILE* err) {
  // Printed page by page, so that memory stays one page's whatever --limit is.
  const std::string query = HistoryQuery(options, now_ms);
  std::fputs(options.json ? "{\"scans\":[" : HistoryHeader().c_str(), out);
  int shown = 0;
  std::string before;
  do {
    const int page = std::min(kMaxPage, options.limit - shown);
    std::string target =
        "/history" + query + (query.empty() ? "?" : "&") + "limit=" + std::to_string(page);
    if (!before.empty()) target += "&before=" + PercentEncode(before);
    int status = kExitOk;
    const auto reply = RequestOnce(connect, http::verb::get, target, "", err, status);
    if (!reply) return status;
    const auto answer = ParseAnswer(reply->body, err);
    if (!answer) return kExitDaemonError;
    const json::value* scans = Field(*answer, "scans");
    const json::value* next = Field(*answer, "next");
    if (scans == nullptr || !scans->is_array() || next == nullptr ||
        !(next->is_null() || next->is_string())) {
      std::fprintf(err, "nbspamc: the daemon's /history answer has no scans or next\n");
      return kExitDaemonError;
    }
    for (const json::value& scan : scans->as_array()) {
      if (options.json) {
        std::fprintf(out, "%s%s", shown == 0 ? "" : ",", json::serialize(scan).c_str());
      } else {
        std::fputs(FormatScanLine(scan).c_str(), out);
      }
      ++shown;
    }
    std::string cursor = next->is_string() ? std::string(next->as_string()) : "";
    if (!cursor.empty() && cursor == before) {
      std::fprintf(err, "nbspamc: the daemon's /history pages do not move on (next %s)\n",
                   TerminalSafe(cursor).c_str());
      return kExitDaemonError;
    }
    before = std::move(cursor);
  } while (!before.empty() && shown < options.limit);

  if (options.json) {
    std::fprintf(
        out, "],\"next\":%s}\n",
        json::serialize(before.empty() ? json::value(nullptr) : json::value(before)).c_str());
  } else if (!before.empty()) {
    std::fprintf(err, "nbspamc: more scans may match: the first %d are shown (--limit)\n",
                 options.limit);
  }
  return kExitOk;
}

int RunScan(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
            std::FILE* err) {
  int status = kExitOk;
  const auto answer =
      RequestAndPrint(connect, http::verb::get, "/history/" + PercentEncode(options.paths.front()),
                      "", options.json, FormatScan, out, err, status);
  return answer ? kExitOk : status;
}

}  // namespace nbspamd::client
