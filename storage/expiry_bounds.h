// Where a cluster cuts the token expiry into steps that it can put in its training stream ahead
// of time, each covering a range with about the same number of tokens: TokenExpiryBounds for the
// global model (TrainingChange::kExpire: ranges of the token hash space), UserExpiryBounds for
// the user layers (TrainingChange::kExpireUsers: ranges of users-family keys).
//
//   std::vector<TokenHash> cuts = TokenExpiryBounds(store.Stats()->vocabulary_size, 512);
//   // Ranges: [0, cuts[0]), [cuts[0], cuts[1]), ..., [cuts.back(), end].
//   store.ExpireTokens(rule, from, 0, until);                       // one range at a time
//
//   auto users = store.ListUsers("", limit);                        // their layers' sizes
//   std::vector<std::string> bounds = UserExpiryBounds(*users, 4096);
//   // Ranges: ["", bounds[0]), [bounds[0], bounds[1]), ..., [bounds.back(), end).
//   store.ExpireUserTokens(rule, from, 0, until);                   // one range at a time
//
// Pure and thread-safe.
#ifndef NBSPAMD_STORAGE_EXPIRY_BOUNDS_H_
#define NBSPAMD_STORAGE_EXPIRY_BOUNDS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/store.h"

namespace nbspamd::storage {

// The token hashes, in increasing order, that cut the whole hash space into equal ranges of about
// `tokens_per_range` of a model's `vocabulary_size` tokens (token hashes are uniform). Empty
// when one range will do. REQUIRES: tokens_per_range > 0.
[[nodiscard]] std::vector<TokenHash> TokenExpiryBounds(std::uint64_t vocabulary_size,
                                                       std::uint64_t tokens_per_range);

// The users-family keys, in increasing order, that cut the layers of `users` (in byte order of
// their ids, as ListUsers gives them) into ranges of about `tokens_per_range` distinct tokens
// (stats.vocabulary_size, which bounds the base records a range holds): consecutive small
// layers share a range, cut at a user's first key; a layer larger than that is cut into equal
// ranges of its token hash space (hashes are uniform). Empty when one range will do.
// REQUIRES: tokens_per_range > 0.
[[nodiscard]] std::vector<std::string> UserExpiryBounds(std::span<const UserSummary> users,
                                                        std::uint64_t tokens_per_range);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_EXPIRY_BOUNDS_H_
