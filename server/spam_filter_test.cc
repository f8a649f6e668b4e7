#include "server/spam_filter.h"

#include <gtest/gtest.h>

#include "storage/memory_store.h"

namespace nbspamd::server {
namespace {

TEST(SpamFilterTest, ContentIdIsStableHex) {
  const std::string id = SpamFilter::ContentId("hello");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id, SpamFilter::ContentId("hello"));
  EXPECT_NE(id, SpamFilter::ContentId("hello "));
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(SpamFilterTest, LabelsAndIdsAreValidated) {
  EXPECT_TRUE(SpamFilter::ValidateLabel("spam").has_value());
  EXPECT_TRUE(SpamFilter::ValidateLabel("news-letter_2.0").has_value());
  EXPECT_EQ(SpamFilter::ValidateLabel("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateLabel("a/b").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateLabel(std::string(65, 'a')).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(SpamFilter::ValidateId("<abc@example.org>").has_value());
  EXPECT_EQ(SpamFilter::ValidateId("a\nb").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SpamFilter::ValidateId(std::string(257, 'a')).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(SpamFilterTest, ForgetRestoresTheVerdictExactly) {
  SpamFilter filter(std::make_unique<storage::MemoryStore>(), SpamFilterOptions{});
  ASSERT_TRUE(filter.Train("cheap watches here", "spam", std::nullopt).has_value());
  ASSERT_TRUE(filter.Train("lunch at noon", "ham", std::nullopt).has_value());
  const auto before = filter.Classify("cheap lunch", 0);
  ASSERT_TRUE(before.has_value());
  ASSERT_TRUE(filter.Train("cheap cheap pills", "spam", "extra").has_value());
  EXPECT_NE(*filter.Classify("cheap lunch", 0)->result.log_odds, *before->result.log_odds);
  ASSERT_TRUE(filter.ForgetId("extra").has_value());
  const auto after = filter.Classify("cheap lunch", 0);
  EXPECT_EQ(*after->result.log_odds, *before->result.log_odds);
  EXPECT_EQ(after->result.classes[0].probability, before->result.classes[0].probability);
}

}  // namespace
}  // namespace nbspamd::server
