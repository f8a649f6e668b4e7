// LearnedState: whether a scan of the history was learned, relearned or forgotten, when, how and
// by whom (docs/API.md, "Scan history"), and its encoding under the history's key family of its
// own (scan_history.h). Plain values and pure functions.
//
//   std::optional<LearnedState> state;                // none: never learned through the daemon
//   state = NextLearnedState(state, {.label = "spam", .time_ms = now, .how = kLearnedByScanId,
//                                    .by = "alice"}).value_or(*state);
//
// A change is counted only when the state changes: learned as another class (a relearn), forgotten,
// learned again after a forget, or counted after being only checked (error-driven training: a
// train the model already scored right beyond train_margin is recorded, not counted, and may be
// counted by a later train). Learning it again as the same class otherwise changes nothing (the
// ledger says "unchanged", or "checked" again), so `at`, `how` and `by` stay those of the change
// that made the state.
//
// Encoding (kLearnedStateFormat, 1; do not change: stored on disk): the format byte, a flags byte
// (1: forgotten, 2: only checked), varint time_ms, then label, how and by length-prefixed
// (varint), varint changes. States written before the checked flag existed decode unchanged.
#ifndef NBSPAMD_HISTORY_LEARNED_STATE_H_
#define NBSPAMD_HISTORY_LEARNED_STATE_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "history/scan_record.h"

namespace nbspamd::history {

inline constexpr std::uint8_t kLearnedStateFormat = 1;

// How a scan was learned or forgotten (LearnedState::how). Do not change: stored on disk.
inline constexpr std::string_view kLearnedByScanId = "scan_id";  // /train or /forget ?scan_id=.
// A reported copy carrying the scan's signed header (nbspamc report, the Dovecot kit's moves).
inline constexpr std::string_view kLearnedByScanHeader = "scan_header";
inline constexpr std::string_view kLearnedBySpamd = "spamd";          // TELL over spamd.
inline constexpr std::string_view kLearnedByAutolearn = "autolearn";  // The daemon itself.
// A train or forget under the message id the scan was classified under (?id=).
inline constexpr std::string_view kLearnedByMessageId = "message_id";
// A train or forget of the message's bytes, whose content id is the scan's message key.
inline constexpr std::string_view kLearnedByMessage = "message";

// One durable train or forget of a scan's message.
struct LearnedChange {
  std::string label = {};  // The class learned; "" for a forget.
  std::int64_t time_ms = 0;
  std::string how = {};  // One of the kLearnedBy* names.
  std::string by = {};   // The source (a bearer token's name, "autolearn"); "": none.
  bool checked = false;  // The ledger only checked it (LearnStatus::kChecked): not counted.
};

// The state after `change` when it changes `prior`; nullopt when it does not (the same class
// learned again, or a forget of a scan already forgotten).
[[nodiscard]] std::optional<LearnedState> NextLearnedState(const std::optional<LearnedState>& prior,
                                                           const LearnedChange& change);

void AppendLearnedState(std::string& out, const LearnedState& state);
// Errors: kDataLoss for a truncated or malformed value or another format.
[[nodiscard]] std::expected<LearnedState, Error> DecodeLearnedState(std::string_view value);

// Whether `state` passes the listing filter `filter` (ScanQuery::learned): "yes" (learned now,
// as any class, counted or only checked), "no" (never learned, or forgotten), "forgotten",
// "checked" (only checked now), or a class name ("spam", "ham": learned now as that class,
// counted or only checked).
[[nodiscard]] bool LearnedMatches(std::string_view filter,
                                  const std::optional<LearnedState>& state);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_LEARNED_STATE_H_
