// AuthToken: a named bearer token, and LoadAuthTokens, which gathers them from the settings'
// auth_tokens list and auth_tokens_file at start-up.
//
//   auth_tokens = "mx1:9f2c6b0e4d7a1c3e,feedback:0a1b2c3d4e5f6a7b"   # NAME:SECRET items
//   auth_tokens_file = "/etc/nbspamd/tokens"   # one NAME:SECRET a line; '#' starts a comment
//
// A name is 1 to 64 characters of A-Z a-z 0-9 _ . -, other than "autolearn" (the daemon's own
// source, model::kAutolearnSource); it is what logs and the ledger's sources show. A secret is 16
// to 256 visible ASCII characters other than ','. Names and secrets are each unique. Error messages
// name the source and the item's position or name, never a secret.
#ifndef NBSPAMD_CONFIG_AUTH_TOKENS_H_
#define NBSPAMD_CONFIG_AUTH_TOKENS_H_

#include <expected>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/settings.h"

namespace nbspamd::config {

struct AuthToken {
  std::string name;
  std::string secret;
};

// The tokens of `settings.auth_tokens` followed by those of `settings.auth_tokens_file`.
// Errors: kInvalidArgument for a malformed item or a duplicate, kNotFound for a file that
// cannot be read.
[[nodiscard]] std::expected<std::vector<AuthToken>, Error> LoadAuthTokens(const Settings& settings);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_AUTH_TOKENS_H_
