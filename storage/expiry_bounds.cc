#include "storage/expiry_bounds.h"

#include <limits>

#include "storage/encoding.h"

namespace nbspamd::storage {

std::vector<TokenHash> TokenExpiryBounds(std::uint64_t vocabulary_size,
                                         std::uint64_t tokens_per_range) {
  const std::uint64_t parts = (vocabulary_size + tokens_per_range - 1) / tokens_per_range;
  if (parts <= 1) return {};
  const std::uint64_t width = std::numeric_limits<std::uint64_t>::max() / parts + 1;
  std::vector<TokenHash> bounds;
  bounds.reserve(parts - 1);
  for (std::uint64_t i = 1; i < parts; ++i) bounds.push_back(i * width);
  return bounds;
}

std::vector<std::string> UserExpiryBounds(std::span<const UserSummary> users,
                                          std::uint64_t tokens_per_range) {
  std::vector<std::string> bounds;
  std::uint64_t in_range = 0;  // Tokens of the range being filled.
  for (const UserSummary& user : users) {
    const std::uint64_t tokens = user.stats.vocabulary_size;
    const bool large = tokens > tokens_per_range;
    if (in_range > 0 && (large || in_range + tokens > tokens_per_range)) {
      bounds.push_back(UserKeyPrefix(user.user));
      in_range = 0;
    }
    if (!large) {
      in_range += tokens;
      continue;
    }
    // Its own ranges, by token hash; the users after it start a range of their own.
    for (const TokenHash cut : TokenExpiryBounds(tokens, tokens_per_range)) {
      bounds.push_back(UserBaseKey(user.user, cut));
    }
    bounds.push_back(UserKeyEnd(user.user));
  }
  // A cut after the last user's keys leaves an empty range behind it.
  if (!bounds.empty() && in_range == 0 && bounds.back() == UserKeyEnd(users.back().user)) {
    bounds.pop_back();
  }
  return bounds;
}

}  // namespace nbspamd::storage
