// TokenExpiryBounds and UserExpiryBounds: the ranges a cluster cuts the token expiry into.
#include "storage/expiry_bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "storage/encoding.h"

namespace nbspamd::storage {
namespace {

UserSummary User(std::string id, std::uint64_t tokens) {
  UserSummary user{std::move(id), {}};
  user.stats.vocabulary_size = tokens;
  return user;
}

TEST(TokenExpiryBoundsTest, CutsTheHashSpaceIntoEqualRangesOfAboutTheTokensAsked) {
  const std::uint64_t quarter = std::uint64_t{1} << 62;
  // 1,537 tokens in ranges of 512: four ranges (the last takes the one left over).
  EXPECT_EQ(TokenExpiryBounds(1537, 512),
            (std::vector<TokenHash>{quarter, 2 * quarter, 3 * quarter}));
  EXPECT_EQ(TokenExpiryBounds(1024, 512), (std::vector<TokenHash>{std::uint64_t{1} << 63}));
  EXPECT_TRUE(TokenExpiryBounds(512, 512).empty());
  EXPECT_TRUE(TokenExpiryBounds(0, 512).empty());
  const std::vector<TokenHash> many = TokenExpiryBounds(10'000'000, 512);
  ASSERT_EQ(many.size(), 19'531u);  // ceil(10,000,000 / 512) ranges.
  EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
  EXPECT_GT(many.back(), std::numeric_limits<std::uint64_t>::max() - many.front());
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
