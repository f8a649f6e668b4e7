#include "http_api/authenticator.h"

#include <algorithm>
#include <cstdint>

namespace nbspamd::http_api {
namespace {

// 0 when `a` and `b` are equal, else non-zero, comparing `length` >= both sizes bytes whatever
// they hold.
std::uint32_t Difference(std::string_view a, std::string_view b, std::size_t length) {
  std::uint32_t difference = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < length; ++i) {
    const auto x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0u;
    const auto y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0u;
    difference |= x ^ y;
  }
  return difference;
}

bool StartsWithBearer(std::string_view value) {
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    char c = value[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return false;
  }
  return true;
}

}  // namespace

Authenticator::Authenticator(std::vector<config::AuthToken> tokens) : tokens_(std::move(tokens)) {
  for (const config::AuthToken& token : tokens_) {
    longest_secret_ = std::max(longest_secret_, token.secret.size());
  }
}

std::vector<std::string> Authenticator::Names() const {
  std::vector<std::string> names;
  for (const config::AuthToken& token : tokens_) names.push_back(token.name);
  return names;
}

std::expected<std::string, Error> Authenticator::Authenticate(
    std::string_view authorization) const {
  if (!StartsWithBearer(authorization)) {
    return MakeError(ErrorCode::kUnauthenticated,
                     "this endpoint needs an 'Authorization: Bearer TOKEN' header");
  }
  std::string_view presented = authorization.substr(7);
  while (!presented.empty() && presented.front() == ' ') presented.remove_prefix(1);
  while (!presented.empty() && presented.back() == ' ') presented.remove_suffix(1);
  // Longer input than any secret is compared up to the longest secret's length plus one, so
  // that it differs, without spending time in proportion to what a client sends.
  const std::size_t length = longest_secret_ + 1;
  const config::AuthToken* match = nullptr;
  for (const config::AuthToken& token : tokens_) {
    const bool equal = Difference(presented.substr(0, length), token.secret, length) == 0;
    if (equal) match = &token;  // Secrets are unique: at most one matches.
  }
  if (match == nullptr) {
    return MakeError(ErrorCode::kPermissionDenied, "the bearer token is not a valid one");
  }
  return match->name;
}

}  // namespace nbspamd::http_api
