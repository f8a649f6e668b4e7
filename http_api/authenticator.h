// Authenticator: checks a request's "Authorization: Bearer SECRET" against the configured
// tokens. Every configured secret is compared, each over the longest secret's length, so the
// time taken says nothing about which secret, or which character of one, matched or differed.
//
//   Authenticator authenticator(std::move(tokens));
//   auto name = authenticator.Authenticate(request[http::field::authorization]);
//   if (!name) return ErrorResponse(name.error());  // 401 or 403
#ifndef NBSPAMD_HTTP_API_AUTHENTICATOR_H_
#define NBSPAMD_HTTP_API_AUTHENTICATOR_H_

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "config/auth_tokens.h"

namespace nbspamd::http_api {

// Thread-safe: immutable after construction.
class Authenticator {
 public:
  Authenticator() = default;  // No tokens: Authenticate is never needed.
  explicit Authenticator(std::vector<config::AuthToken> tokens);

  // True when tokens are configured, so the guarded endpoints need one.
  [[nodiscard]] bool enabled() const { return !tokens_.empty(); }

  // The configured tokens' names.
  [[nodiscard]] std::vector<std::string> Names() const;

  // The name of the token that `authorization` (an Authorization header's value) carries.
  // Errors: kUnauthenticated when it carries no bearer token, kPermissionDenied when the token
  // is not a configured one. Messages never repeat the token.
  [[nodiscard]] std::expected<std::string, Error> Authenticate(
      std::string_view authorization) const;

 private:
  std::vector<config::AuthToken> tokens_;
  std::size_t longest_secret_ = 0;
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_AUTHENTICATOR_H_
