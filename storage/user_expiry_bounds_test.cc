// UserExpiryBounds: the ranges a cluster cuts the token expiry of the user layers into.
#include "storage/user_expiry_bounds.h"

#include <gtest/gtest.h>

#include <limits>

#include "storage/encoding.h"

namespace nbspamd::storage {
namespace {

UserSummary User(std::string id, std::uint64_t tokens) {
  UserSummary user{std::move(id), {}};
  user.stats.vocabulary_size = tokens;
  return user;
}

TEST(UserExpiryBoundsTest, SmallLayersShareARangeUntilItIsFull) {
  const std::vector<UserSummary> users = {User("a", 4), User("b", 5), User("c", 2), User("d", 9)};
  // a + b = 9 fit in 10; c would make 11: cut before c; c + d = 11: cut before d.
  EXPECT_EQ(UserExpiryBounds(users, 10),
            (std::vector<std::string>{UserKeyPrefix("c"), UserKeyPrefix("d")}));
  EXPECT_TRUE(UserExpiryBounds(users, 100).empty());
  EXPECT_TRUE(UserExpiryBounds({}, 10).empty());
}

TEST(UserExpiryBoundsTest, ALargeLayerIsCutByTokenHash) {
  const std::vector<UserSummary> users = {User("a", 1), User("big", 25), User("c", 1)};
  const std::uint64_t third = std::numeric_limits<std::uint64_t>::max() / 3 + 1;
  EXPECT_EQ(UserExpiryBounds(users, 10),
            (std::vector<std::string>{UserKeyPrefix("big"), UserBaseKey("big", third),
                                      UserBaseKey("big", 2 * third), UserKeyEnd("big")}));
  // Last, it leaves no empty range behind it.
  const std::vector<UserSummary> last = {User("big", 15)};
  EXPECT_EQ(UserExpiryBounds(last, 10),
            (std::vector<std::string>{UserBaseKey("big", std::uint64_t{1} << 63)}));
}

}  // namespace
}  // namespace nbspamd::storage
