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

TEST(LearnedStateTest, AnOnlyCheckedTrainIsAStateAndCountingItLaterIsAChange) {
  LearnedChange checked = Learn("spam", 10);
  checked.checked = true;
  auto state = NextLearnedState(std::nullopt, checked);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->label, "spam");
  EXPECT_TRUE(state->checked);
  EXPECT_EQ(state->changes, 1u);

  // Checked again: no change, the state keeps who made it.
  checked.time_ms = 20;
  checked.by = "bob";
  EXPECT_FALSE(NextLearnedState(state, checked));

  // Counted later (the model had moved within the margin): a change, no longer only checked.
  state = NextLearnedState(state, Learn("spam", 30, "carol"));
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->checked);
  EXPECT_EQ(state->by, "carol");
  EXPECT_EQ(state->changes, 2u);
  // Once counted, the same class again is no change, checked or not.
  EXPECT_FALSE(NextLearnedState(state, Learn("spam", 40)));
  checked.time_ms = 40;
  EXPECT_FALSE(NextLearnedState(state, checked));

  // Forgotten, then learned as the other class and only checked: a state of its own each time.
  state = NextLearnedState(state, {.label = "", .time_ms = 50, .how = "scan_id", .by = ""});
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->forgotten);
  EXPECT_FALSE(state->checked);
  LearnedChange ham = Learn("ham", 60);
  ham.checked = true;
  state = NextLearnedState(state, ham);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->label, "ham");
  EXPECT_TRUE(state->checked);
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

  const LearnedState checked{
      .label = "spam", .checked = true, .time_ms = 9, .how = "scan_id", .by = "", .changes = 1};
  value.clear();
  AppendLearnedState(value, checked);
  EXPECT_EQ(value[1], '\x02');  // The checked flag.
  decoded = DecodeLearnedState(value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, checked);

  const LearnedState forgotten{.forgotten = true, .time_ms = 5, .how = "autolearn", .changes = 2};
  value.clear();
  AppendLearnedState(value, forgotten);
  decoded = DecodeLearnedState(value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, forgotten);

  for (const std::string& bad :
       {std::string(), std::string("\x02\x00", 2), value.substr(0, value.size() - 1), value + "x",
        std::string("\x01\x04\x00\x00\x00\x00\x00", 7),
        // Forgotten and only checked at once: no train makes that state.
        std::string("\x01\x03\x00\x00\x00\x00\x00", 7)}) {
    auto result = DecodeLearnedState(bad);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::kDataLoss);
  }
}

TEST(LearnedStateTest, TheListingFilterTellsLearnedFromForgottenAndNeverLearned) {
  const LearnedState spam{.label = "spam", .changes = 1};
  const LearnedState ham{.label = "ham", .changes = 2};
  const LearnedState forgotten{.forgotten = true, .changes = 3};
  const LearnedState checked{.label = "spam", .checked = true, .changes = 1};
  EXPECT_TRUE(LearnedMatches("yes", checked));
  EXPECT_TRUE(LearnedMatches("spam", checked));
  EXPECT_FALSE(LearnedMatches("ham", checked));
  EXPECT_FALSE(LearnedMatches("no", checked));
  EXPECT_TRUE(LearnedMatches("checked", checked));
  EXPECT_FALSE(LearnedMatches("checked", spam));
  EXPECT_FALSE(LearnedMatches("checked", forgotten));
  EXPECT_FALSE(LearnedMatches("checked", std::nullopt));
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
