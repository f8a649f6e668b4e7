// UserExpiryBounds: where to cut the token expiry of the user layers into steps that a cluster
// can put in its training stream ahead of time (TrainingChange::kExpireUsers), each covering a
// range of users-family keys with about the same number of tokens.
//
//   auto users = store.ListUsers("", limit);                        // their layers' sizes
//   std::vector<std::string> bounds = UserExpiryBounds(*users, 4096);
//   // Ranges: ["", bounds[0]), [bounds[0], bounds[1]), ..., [bounds.back(), end).
//   store.ExpireUserTokens(rule, from, 0, until);                   // one range at a time
//
// Pure and thread-safe.
#ifndef NBSPAMD_STORAGE_USER_EXPIRY_BOUNDS_H_
#define NBSPAMD_STORAGE_USER_EXPIRY_BOUNDS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/store.h"

namespace nbspamd::storage {

// The users-family keys, in increasing order, that cut the layers of `users` (in byte order of
// their ids, as ListUsers gives them) into ranges of about `tokens_per_range` distinct tokens
// (stats.vocabulary_size, which bounds the base records a range holds): consecutive small
// layers share a range, cut at a user's first key; a layer larger than that is cut into equal
// ranges of its token hash space (hashes are uniform). Empty when one range will do.
// REQUIRES: tokens_per_range > 0.
[[nodiscard]] std::vector<std::string> UserExpiryBounds(std::span<const UserSummary> users,
                                                        std::uint64_t tokens_per_range);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_USER_EXPIRY_BOUNDS_H_
