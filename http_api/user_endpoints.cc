// GET /users/{id}/stats and DELETE /users/{id}: a user's layer (core/spam_filter.h).
// The id is the path's second segment, percent-decoded; model::CheckUserId decides what is valid.
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <expected>
#include <string>

#include "common/utf8.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

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

std::optional<Response> HandleUserStats(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  auto user = UserOfTarget(call.request.target());
  if (!user) return call.Error(user.error());
  auto stats = call.filter.UserStats(*user);
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
  call.filter.DeleteUserAsync(
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
