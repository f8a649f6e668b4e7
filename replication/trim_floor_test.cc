#include "replication/trim_floor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nbspamd::replication {
namespace {

constexpr std::int64_t kNow = 1700000100000;
constexpr std::int64_t kWindow = 10000;
// What the window alone lets go: every entry older than kNow - kWindow.
constexpr StreamId kWindowFloor{static_cast<std::uint64_t>(kNow - kWindow), 0};
// Far ahead of everything: this daemon holds nothing back unless a test says otherwise.
constexpr StreamId kCaughtUp{static_cast<std::uint64_t>(kNow), 7};

using Reports = std::map<std::string, std::optional<PositionReport>>;
using Known = std::map<std::string, PositionReport>;
using Missing = std::vector<std::pair<std::string, StreamId>>;

// A complete round of daemon "self": the stream and the positions were read, the hash is empty.
TrimRound Round(StreamId applied = kCaughtUp) {
  TrimRound round;
  round.now_ms = kNow;
  round.retention_ms = kWindow;
  round.self = "self";
  round.applied = applied;
  round.stream_read = true;
  round.reports.emplace();
  return round;
}

// A report written `ago` milliseconds before kNow.
PositionReport Seen(StreamId position, std::int64_t ago) { return {position, kNow - ago}; }

TEST(TrimFloorTest, WithNoReportsOnlyTheWindowAndThisDaemonHoldTheStreamBack) {
  const TrimDecision decision = TrimFloor(Round());
  EXPECT_EQ(decision.floor, kWindowFloor);
  EXPECT_TRUE(decision.known.empty());
  EXPECT_TRUE(decision.missing.empty());
}

TEST(TrimFloorTest, ThisDaemonsAppliedPositionHoldsBackWhateverItsReportSays) {
  // Its report may be stale or unwritten (the HSET failed): what it applied counts.
  TrimRound round = Round(StreamId{5000, 2});
  round.reports->insert_or_assign("self", Seen(kCaughtUp, 0));
  EXPECT_EQ(TrimFloor(round).floor, (StreamId{5000, 2}));
  // And its own report counts like any other when it is the older of the two.
  round.applied = kCaughtUp;
  round.reports->insert_or_assign("self", Seen({6000, 0}, 0));
  EXPECT_EQ(TrimFloor(round).floor, (StreamId{6000, 0}));
}

TEST(TrimFloorTest, TheFloorIsTheOldestPositionOfTheLiveDaemons) {
  TrimRound round = Round();
  round.reports->insert_or_assign("a", Seen({kNow - 20, 0}, 100));
  round.reports->insert_or_assign("b", Seen({50000, 3}, 900));
  round.reports->insert_or_assign("c", Seen({50000, 4}, 0));
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, (StreamId{50000, 3}));  // The sequence decides within a millisecond.
  EXPECT_EQ(decision.known, (Known{{"a", Seen({kNow - 20, 0}, 100)},
                                   {"b", Seen({50000, 3}, 900)},
                                   {"c", Seen({50000, 4}, 0)}}));
  EXPECT_TRUE(decision.missing.empty());
}

TEST(TrimFloorTest, ALiveDaemonFarBehindHoldsTheStreamAtItsPositionHoweverOld) {
  // A gap of days between it and the others: the floor is its position, not the others'.
  TrimRound round = Round();
  round.reports->insert_or_assign("ahead", Seen({kNow - 5, 0}, 0));
  round.reports->insert_or_assign("behind", Seen({1000, 0}, 0));
  EXPECT_EQ(TrimFloor(round).floor, (StreamId{1000, 0}));
}

TEST(TrimFloorTest, ThePositionsOfDaemonsOlderThanTheWindowNoLongerCount) {
  TrimRound round = Round();
  round.reports->insert_or_assign("gone", Seen({1000, 0}, kWindow + 1));
  round.reports->insert_or_assign("edge", Seen({kNow - kWindow - 100, 0}, kWindow));  // Just in.
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, (StreamId{kNow - kWindow - 100, 0}));
  // Only the daemons seen within the window are remembered.
  EXPECT_EQ(decision.known, (Known{{"edge", Seen({kNow - kWindow - 100, 0}, kWindow)}}));

  round.reports->erase("edge");
  EXPECT_EQ(TrimFloor(round).floor, kWindowFloor);
}

TEST(TrimFloorTest, AReportFromTheFutureCountsAsRecent) {
  // Clocks differ between machines.
  TrimRound round = Round();
  round.reports->insert_or_assign("skewed", Seen({2000, 0}, -60000));
  EXPECT_EQ(TrimFloor(round).floor, (StreamId{2000, 0}));
}

TEST(TrimFloorTest, AVanishedReportHoldsTheStreamAtItsLastPositionUntilItsWindowPasses) {
  TrimRound round = Round();
  round.known = {{"vanished", Seen({3000, 1}, 4000)}};
  TrimDecision decision = TrimFloor(round);  // The hash no longer has it.
  EXPECT_EQ(decision.floor, (StreamId{3000, 1}));
  EXPECT_EQ(decision.missing, (Missing{{"vanished", {3000, 1}}}));
  EXPECT_EQ(decision.known, round.known);  // Still remembered.

  // The next rounds, until its window has passed since it was last seen.
  round.known = decision.known;
  round.now_ms = kNow + kWindow - 4000;  // Exactly the window.
  decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, (StreamId{3000, 1}));
  EXPECT_EQ(decision.missing.size(), 1u);

  round.known = decision.known;
  round.now_ms = kNow + kWindow - 4000 + 1;
  decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, (StreamId{kNow - 4000 + 1, 0}));
  EXPECT_TRUE(decision.missing.empty());
  EXPECT_TRUE(decision.known.empty());  // Forgotten.
}

TEST(TrimFloorTest, AReportThatCameBackReplacesWhatWasRemembered) {
  TrimRound round = Round();
  round.known = {{"peer", Seen({3000, 0}, 4000)}};
  round.reports->insert_or_assign("peer", Seen({kNow - 1, 0}, 0));
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, kWindowFloor);
  EXPECT_TRUE(decision.missing.empty());
  EXPECT_EQ(decision.known, (Known{{"peer", Seen({kNow - 1, 0}, 0)}}));
}

TEST(TrimFloorTest, AReportThatCameBackOlderThanTheWindowIsForgotten) {
  // Written by hand with an old time, say: it holds nothing back, and is not "missing" either.
  TrimRound round = Round();
  round.known = {{"peer", Seen({3000, 0}, 4000)}};
  round.reports->insert_or_assign("peer", Seen({1000, 0}, kWindow + 1));
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, kWindowFloor);
  EXPECT_TRUE(decision.missing.empty());
  EXPECT_TRUE(decision.known.empty());
}

TEST(TrimFloorTest, ThisDaemonsOwnVanishedReportIsNotMissing) {
  // Its applied position holds the stream back already.
  TrimRound round = Round();
  round.known = {{"self", Seen({3000, 0}, 4000)}};
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, kWindowFloor);
  EXPECT_TRUE(decision.missing.empty());
  EXPECT_TRUE(decision.known.empty());
}

TEST(TrimFloorTest, AReportThatCannotBeParsedTrimsNothing) {
  TrimRound round = Round();
  round.reports->insert_or_assign("broken", std::nullopt);
  round.reports->insert_or_assign("fine", Seen({kNow - 1, 0}, 0));
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, std::nullopt);
  // The readable reports are remembered all the same.
  EXPECT_EQ(decision.known, (Known{{"fine", Seen({kNow - 1, 0}, 0)}}));
  EXPECT_TRUE(decision.missing.empty());
}

TEST(TrimFloorTest, ARememberedDaemonWhoseReportCannotBeParsedIsAlsoMissing) {
  TrimRound round = Round();
  round.known = {{"broken", Seen({3000, 0}, 4000)}};
  round.reports->insert_or_assign("broken", std::nullopt);
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, std::nullopt);
  EXPECT_EQ(decision.missing, (Missing{{"broken", {3000, 0}}}));
  EXPECT_EQ(decision.known, round.known);  // Its last readable report still counts later.
}

TEST(TrimFloorTest, AFailedReadOfTheStreamTrimsNothing) {
  TrimRound round = Round();
  round.stream_read = false;
  round.known = {{"vanished", Seen({3000, 0}, 4000)}};
  round.reports->insert_or_assign("peer", Seen({kNow - 1, 0}, 0));
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, std::nullopt);
  // The positions were read: what they say is remembered, and a vanished report noticed.
  EXPECT_EQ(decision.known,
            (Known{{"peer", Seen({kNow - 1, 0}, 0)}, {"vanished", Seen({3000, 0}, 4000)}}));
  EXPECT_EQ(decision.missing, (Missing{{"vanished", {3000, 0}}}));
}

TEST(TrimFloorTest, AFailedReadOfThePositionsTrimsNothingAndForgetsNothing) {
  TrimRound round = Round();
  round.reports = std::nullopt;
  round.known = {{"peer", Seen({3000, 0}, 4000)}, {"old", Seen({1000, 0}, kWindow + 1)}};
  const TrimDecision decision = TrimFloor(round);
  EXPECT_EQ(decision.floor, std::nullopt);
  EXPECT_EQ(decision.known, round.known);  // Not even "old": nothing was learned this round.
  EXPECT_TRUE(decision.missing.empty());
}

TEST(TrimFloorTest, NothingToTrimIsNoFloor) {
  // A daemon that has applied nothing needs the whole stream: MINID 0-0 or 0-1 deletes nothing.
  EXPECT_EQ(TrimFloor(Round(StreamId{0, 0})).floor, std::nullopt);
  EXPECT_EQ(TrimFloor(Round(StreamId{0, 1})).floor, std::nullopt);
  EXPECT_EQ(TrimFloor(Round(StreamId{0, 2})).floor, (StreamId{0, 2}));
  TrimRound round = Round();
  round.reports->insert_or_assign("fresh", Seen({0, 0}, 0));
  EXPECT_EQ(TrimFloor(round).floor, std::nullopt);
}

TEST(TrimFloorTest, AWindowLongerThanTheClockReachesBackTrimsNothing) {
  TrimRound round = Round();
  round.now_ms = 5000;
  round.retention_ms = 10000;  // now - window < 0: clamped to 0-0.
  EXPECT_EQ(TrimFloor(round).floor, std::nullopt);
  round.retention_ms = 4000;
  EXPECT_EQ(TrimFloor(round).floor, (StreamId{1000, 0}));
}

TEST(TrimmedPastTest, ADaemonWhoseModelEndsBeforeTheTrimmedPartHasAGap) {
  EXPECT_TRUE(TrimmedPast("5-0", "4-9"));
  EXPECT_TRUE(TrimmedPast("5-1", "5-0"));
  EXPECT_TRUE(TrimmedPast("5-0", ""));  // Nothing applied: it needs everything.
  EXPECT_TRUE(TrimmedPast("5-0", "not an id"));
}

TEST(TrimmedPastTest, ADaemonAtOrPastTheTrimmedPartHasNone) {
  EXPECT_FALSE(TrimmedPast("5-0", "5-0"));  // It applied the last entry that went.
  EXPECT_FALSE(TrimmedPast("5-0", "5-1"));
  EXPECT_FALSE(TrimmedPast("5-0", "1700000000000-0"));
}

TEST(TrimmedPastTest, NothingTrimmedOrAnUnreadableMarkIsNoGap) {
  EXPECT_FALSE(TrimmedPast("", ""));
  EXPECT_FALSE(TrimmedPast("", "5-0"));
  EXPECT_FALSE(TrimmedPast("garbage", ""));
}

}  // namespace
}  // namespace nbspamd::replication
