// GET /history and GET /history/{id}: the scan history (history/scan_history.h), read-only.
// Filters of /history: since and until (Unix milliseconds), verdict, user ("" for the global
// model's scans), front_end, q (a text match on the kept facts), before (the page cursor) and
// limit (1 to 1000, default 50).
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <charconv>
#include <expected>
#include <string>

#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;

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

std::optional<Response> HistoryOff(Call& call) {
  return call.Error(http::status::not_found, "not_found",
                    "the scan history is off (setting history)");
}

}  // namespace

std::optional<Response> HandleHistory(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(
          input, {"since", "until", "verdict", "user", "front_end", "q", "before", "limit"}, {}))
    return *rejected;
  const history::ScanHistory* history = call.filter.History();
  if (history == nullptr) return HistoryOff(call);
  history::ScanQuery query;
  if (auto read = ReadQuery(input, query); !read) return call.Error(read.error());
  auto page = history->List(query);
  if (!page) return call.Error(page.error());
  return JsonResponse(ScanPageJson(*page), call.request.version());
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
