#include "history/learned_state.h"

#include <gtest/gtest.h>

namespace nbspamd::history {
namespace {

LearnedChange Learn(std::string label, std::int64_t at, std::string by = "alice") {
  return {.label = std::move(label),
          .time_ms = at,
          .how = std::string(kLearnedByScanId),
          .by = std::move(by)};
}

TEST(LearnedStateTest, AFirstLearnARelearnAndAForgetEachCountAsAChange) {
  auto state = NextLearnedState(std::nullopt, Learn("spam", 10));
  ASSERT_TRUE(state);
  EXPECT_EQ(state->label, "spam");
  EXPECT_FALSE(state->forgotten);
  EXPECT_EQ(state->time_ms, 10);
  EXPECT_EQ(state->how, "scan_id");
  EXPECT_EQ(state->by, "alice");
  EXPECT_EQ(state->changes, 1u);

  // The same class again changes nothing: the state keeps who made it.
  EXPECT_FALSE(NextLearnedState(state, Learn("spam", 20, "bob")));

  state = NextLearnedState(state, Learn("ham", 30, "bob"));
  ASSERT_TRUE(state);
  EXPECT_EQ(state->label, "ham");
  EXPECT_EQ(state->by, "bob");
  EXPECT_EQ(state->changes, 2u);

  state = NextLearnedState(state, {.label = "", .time_ms = 40, .how = "message_id", .by = ""});
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->forgotten);
  EXPECT_EQ(state->label, "");
  EXPECT_EQ(state->how, "message_id");
  EXPECT_EQ(state->changes, 3u);
  // A forget of a forgotten scan changes nothing; a learn after it does.
  EXPECT_FALSE(NextLearnedState(state, {.label = "", .time_ms = 50}));
  state = NextLearnedState(state, Learn("spam", 60));
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->forgotten);
  EXPECT_EQ(state->changes, 4u);
}

TEST(LearnedStateTest, EncodesAndDecodesExactlyAndRejectsMalformedValues) {
  const LearnedState state{.label = "ham",
                           .forgotten = false,
                           .time_ms = 1'700'000'000'123,
                           .how = "scan_header",
                           .by = "dovecot",
                           .changes = 7};
  std::string value;
  AppendLearnedState(value, state);
  auto decoded = DecodeLearnedState(value);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, state);

  const LearnedState forgotten{.forgotten = true, .time_ms = 5, .how = "autolearn", .changes = 2};
  value.clear();
  AppendLearnedState(value, forgotten);
  decoded = DecodeLearnedState(value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, forgotten);

  for (const std::string& bad :
       {std::string(), std::string("\x02\x00", 2), value.substr(0, value.size() - 1), value + "x",
        std::string("\x01\x04\x00\x00\x00\x00\x00", 7)}) {
    auto result = DecodeLearnedState(bad);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::kDataLoss);
  }
}

TEST(LearnedStateTest, TheListingFilterTellsLearnedFromForgottenAndNeverLearned) {
  const LearnedState spam{.label = "spam", .changes = 1};
  const LearnedState ham{.label = "ham", .changes = 2};
  const LearnedState forgotten{.forgotten = true, .changes = 3};
  EXPECT_TRUE(LearnedMatches("yes", spam));
  EXPECT_TRUE(LearnedMatches("yes", ham));
  EXPECT_FALSE(LearnedMatches("yes", forgotten));
  EXPECT_FALSE(LearnedMatches("yes", std::nullopt));
  EXPECT_TRUE(LearnedMatches("no", std::nullopt));
  EXPECT_TRUE(LearnedMatches("no", forgotten));
  EXPECT_FALSE(LearnedMatches("no", spam));
  EXPECT_TRUE(LearnedMatches("spam", spam));
  EXPECT_FALSE(LearnedMatches("spam", ham));
  EXPECT_FALSE(LearnedMatches("ham", std::nullopt));
  EXPECT_TRUE(LearnedMatches("forgotten", forgotten));
  EXPECT_FALSE(LearnedMatches("forgotten", spam));
  EXPECT_FALSE(LearnedMatches("forgotten", std::nullopt));
}

}  // namespace
}  // namespace nbspamd::history
