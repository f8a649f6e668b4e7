// GET /users, GET /users/{id}/stats and DELETE /users/{id}: the users' layers
// (core/spam_filter.h).
// The id is the path's second segment, percent-decoded; model::CheckUserId decides what is valid.
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>
#include <expected>
#include <string>

#include "common/utf8.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::size_t kMaxUserPage = 1000;

// The user the request's path names: /users/{id}[/...], {id} percent-decoded.
// Errors: kInvalidArgument when the target is not such a path (the router matched it, so only
// a bug gets here).
std::expected<std::string, Error> UserOfTarget(std::string_view target) {
  auto url = boost::urls::parse_origin_form(target);
  if (!url) return MakeError(ErrorCode::kInvalidArgument, "the request target is not a path");
  const auto segments = url->segments();
  if (segments.size() < 2) {
    return MakeError(ErrorCode::kInvalidArgument, "the path names no user");
  }
  return *std::next(segments.begin());
}

}  // namespace

std::optional<Response> HandleUserList(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"after", "limit"}, {})) return *rejected;
  const auto after = input.query.find("after");
  std::size_t limit = 100;
  if (const auto it = input.query.find("limit"); it != input.query.end()) {
    const std::string& text = it->second;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (error != std::errc() || end != text.data() + text.size() || limit == 0 ||
        limit > kMaxUserPage) {
      return call.Error(http::status::bad_request, "invalid_argument",
                        "limit must be a whole number from 1 to " + std::to_string(kMaxUserPage));
    }
  }
  auto users =
      call.filter.Users().ListUsers(after == input.query.end() ? "" : after->second, limit);
  if (!users) return call.Error(users.error());
  json::array listed;
  for (const storage::UserSummary& user : *users) {
    listed.push_back(UserStatsJson(user.user, user.stats));
  }
  json::object body{{"users", std::move(listed)}};
  // The cursor of the next page: the last user listed, when the page is full.
  body["next"] = users->size() == limit ? json::value(ReplaceInvalidUtf8(users->back().user))
                                        : json::value(nullptr);
  return JsonResponse(body, call.request.version());
}

std::optional<Response> HandleUserStats(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  auto user = UserOfTarget(call.request.target());
  if (!user) return call.Error(user.error());
  auto stats = call.filter.Users().UserStats(*user);
  if (!stats) return call.Error(stats.error());
  if (!*stats) {
    return call.Error(http::status::not_found, "not_found",
                      "user '" + *user + "' has no layer: nothing was learned for it");
  }
  return JsonResponse(UserStatsJson(*user, **stats), call.request.version());
}

std::optional<Response> HandleUserDelete(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  auto user = UserOfTarget(call.request.target());
  if (!user) return call.Error(user.error());
  call.filter.Users().DeleteUserAsync(
      *user, [user = *user, version = call.request.version(),
              respond = call.TakeRespond()](std::expected<void, nbspamd::Error> deleted) mutable {
        Deliver(respond, version, [&] {
          if (!deleted) return ErrorResponse(deleted.error(), version);
          return JsonResponse(json::object{{"user", ReplaceInvalidUtf8(user)}, {"deleted", true}},
                              version);
        });
      });
  return std::nullopt;
}

}  // namespace nbspamd::http_api
