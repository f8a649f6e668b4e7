// GET /history and GET /history/{id}: the scan history (history/scan_history.h), read-only.
// Filters of /history: since and until (Unix milliseconds), verdict, user ("" for the global
// model's scans), front_end, learned (yes, no, spam, ham, checked or forgotten), q (a text match
// on the kept facts), before (the page cursor) and limit (1 to 1000, default 50). The answer also
// says how the facts are kept ("history_facts") and, for a q that a hashed fact cannot match by
// a word, why ("notice").
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <charconv>
#include <chrono>
#include <expected>
#include <string>

#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

std::expected<std::int64_t, Error> ParseMillis(std::string_view name, std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string(name) + " must be a Unix time in milliseconds");
  }
  return value;
}

// Fills `query` from the request's parameters (an out-parameter: GCC 12 warns, wrongly, of an
// optional string returned in an expected), kept out of line: inlined into HandleHistory, GCC 12
// with -fsanitize=thread warns, wrongly, that the fresh query's optional strings are uninitialized.
[[gnu::noinline]] std::expected<void, Error> ReadQuery(const Input& input,
                                                       history::ScanQuery& query) {
  const auto find = [&](std::string_view name) -> const std::string* {
    const auto it = input.query.find(name);
    return it == input.query.end() ? nullptr : &it->second;
  };
  for (auto [name, field] : {std::pair{"since", &query.since_ms}, {"until", &query.until_ms}}) {
    if (const std::string* text = find(name)) {
      auto parsed = ParseMillis(name, *text);
      if (!parsed) return std::unexpected(std::move(parsed.error()));
      *field = *parsed;
    }
  }
  if (const std::string* verdict = find("verdict")) {
    if (*verdict != "spam" && *verdict != "ham" && *verdict != "unsure") {
      return MakeError(ErrorCode::kInvalidArgument, "verdict must be spam, ham or unsure");
    }
    query.verdict.emplace(*verdict);
  }
  if (const std::string* front_end = find("front_end")) {
    if (*front_end != "http" && *front_end != "milter" && *front_end != "spamd") {
      return MakeError(ErrorCode::kInvalidArgument, "front_end must be http, milter or spamd");
    }
    query.front_end.emplace(*front_end);
  }
  if (const std::string* learned = find("learned")) {
    if (*learned != "yes" && *learned != "no" && *learned != "spam" && *learned != "ham" &&
        *learned != "checked" && *learned != "forgotten") {
      return MakeError(ErrorCode::kInvalidArgument,
                       "learned must be yes, no, spam, ham, checked or forgotten");
    }
    query.learned.emplace(*learned);
  }
  if (const std::string* user = find("user")) query.user.emplace(*user);
  if (const std::string* text = find("q")) query.text = *text;
  if (const std::string* before = find("before")) query.before = *before;
  if (const std::string* limit = find("limit")) {
    const auto [end, error] =
        std::from_chars(limit->data(), limit->data() + limit->size(), query.limit);
    if (error != std::errc() || end != limit->data() + limit->size() || query.limit == 0 ||
        query.limit > history::kMaxScanPage) {
      return MakeError(ErrorCode::kInvalidArgument, "limit must be a whole number from 1 to " +
                                                        std::to_string(history::kMaxScanPage));
    }
  }
  return {};
}

// Why a search by `query`'s text may miss scans: the facts kept as hashes (found only when typed
// whole) by policy, and those of scans older than the clear facts' bound. null when none.
json::value SearchNotice(const history::ScanQuery& query, const history::FactPolicies& facts,
                         std::int64_t clear_facts_ms, std::int64_t now_ms) {
  if (query.text.empty()) return nullptr;
  std::string hashed;
  for (const auto& [name, policy] : {std::pair{"subjects", facts.subject},
                                     {"senders", facts.from_domain},
                                     {"recipients", facts.recipients},
                                     {"message ids", facts.message_id},
                                     {"client addresses", facts.client}}) {
    if (policy != history::FactPolicy::kHash) continue;
    hashed += (hashed.empty() ? "" : ", ") + std::string(name);
  }
  std::string text;
  if (!hashed.empty()) {
    text = hashed +
           " are kept as hashes (settings history_keep_*): type the whole value to find "
           "a scan by one";
  }
  const bool reaches_old =
      clear_facts_ms > 0 && (!query.since_ms || *query.since_ms < now_ms - clear_facts_ms);
  if (reaches_old) {
    text += (text.empty() ? "" : "; ") +
            std::string("subjects, senders and recipients of scans older than ") +
            std::to_string(clear_facts_ms / 86'400'000) +
            " days are kept as hashes (setting history_clear_facts_days): type the whole value "
            "to find those";
  }
  if (text.empty()) return nullptr;
  return json::value(text);
}

std::optional<Response> HistoryOff(Call& call) {
  return call.Error(http::status::not_found, "not_found",
                    "the scan history is off (setting history)");
}

}  // namespace

std::optional<Response> HandleHistory(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(
          input,
          {"since", "until", "verdict", "user", "front_end", "learned", "q", "before", "limit"},
          {}))
    return *rejected;
  const history::ScanHistory* history = call.filter.History();
  if (history == nullptr) return HistoryOff(call);
  history::ScanQuery query;
  if (auto read = ReadQuery(input, query); !read) return call.Error(read.error());
  auto page = history->List(query);
  if (!page) return call.Error(page.error());
  json::object body = ScanPageJson(*page);
  const history::FactPolicies facts = call.filter.HistoryFacts();
  const std::int64_t clear_facts_ms = history->ClearFactsAge();
  body["history_facts"] = HistoryFactsJson(facts, clear_facts_ms);
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  body["notice"] = SearchNotice(query, facts, clear_facts_ms, now_ms);
  return JsonResponse(std::move(body), call.request.version());
}

std::optional<Response> HandleHistoryScan(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  const history::ScanHistory* history = call.filter.History();
  if (history == nullptr) return HistoryOff(call);
  auto url = boost::urls::parse_origin_form(call.request.target());
  if (!url || url->segments().size() != 2) {
    return call.Error(http::status::bad_request, "invalid_argument", "the path names no scan");
  }
  auto scan = history->Find(*std::next(url->segments().begin()));
  if (!scan) return call.Error(scan.error());
  return JsonResponse(ScanJson(*scan), call.request.version());
}

}  // namespace nbspamd::http_api
