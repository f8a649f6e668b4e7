#include "history/learned_state.h"

#include "storage/encoding.h"

namespace nbspamd::history {
namespace {

constexpr std::uint8_t kLearnedForgottenFlag = 1;
constexpr std::uint8_t kLearnedCheckedFlag = 2;

void PutLearnedText(std::string& out, std::string_view text) {
  storage::PutVarint64(out, text.size());
  out.append(text);
}

bool GetLearnedText(std::string_view& in, std::string& value) {
  std::uint64_t size = 0;
  if (!storage::GetVarint64(in, size) || size > in.size()) return false;
  value.assign(in.substr(0, size));
  in.remove_prefix(size);
  return true;
}

std::unexpected<Error> MalformedState() {
  return MakeError(ErrorCode::kDataLoss, "malformed learned state of a scan");
}

}  // namespace

std::optional<LearnedState> NextLearnedState(const std::optional<LearnedState>& prior,
                                             const LearnedChange& change) {
  const bool forget = change.label.empty();
  if (prior) {
    if (forget && prior->forgotten) return std::nullopt;
    // The same class again: a change only when a record that was only checked is now counted
    // (a counted record is never only checked later: the ledger says "unchanged").
    if (!forget && !prior->forgotten && prior->label == change.label &&
        !(prior->checked && !change.checked)) {
      return std::nullopt;
    }
  }
  LearnedState next;
  next.label = forget ? std::string() : change.label;
  next.forgotten = forget;
  next.checked = !forget && change.checked;
  next.time_ms = change.time_ms;
  next.how = change.how;
  next.by = change.by;
  next.changes = prior ? prior->changes + 1 : 1;
  return next;
}

void AppendLearnedState(std::string& out, const LearnedState& state) {
  out.push_back(static_cast<char>(kLearnedStateFormat));
  out.push_back(static_cast<char>((state.forgotten ? kLearnedForgottenFlag : 0) |
                                  (state.checked ? kLearnedCheckedFlag : 0)));
  storage::PutVarint64(out, static_cast<std::uint64_t>(state.time_ms));
  PutLearnedText(out, state.label);
  PutLearnedText(out, state.how);
  PutLearnedText(out, state.by);
  storage::PutVarint64(out, state.changes);
}

std::expected<LearnedState, Error> DecodeLearnedState(std::string_view value) {
  if (value.size() < 2 || static_cast<std::uint8_t>(value[0]) != kLearnedStateFormat) {
    return MalformedState();
  }
  const auto flags = static_cast<std::uint8_t>(value[1]);
  if ((flags & ~(kLearnedForgottenFlag | kLearnedCheckedFlag)) != 0 ||
      flags == (kLearnedForgottenFlag | kLearnedCheckedFlag)) {
    return MalformedState();
  }
  value.remove_prefix(2);
  LearnedState state;
  state.forgotten = (flags & kLearnedForgottenFlag) != 0;
  state.checked = (flags & kLearnedCheckedFlag) != 0;
  std::uint64_t time = 0;
  std::uint64_t changes = 0;
  if (!storage::GetVarint64(value, time) || !GetLearnedText(value, state.label) ||
      !GetLearnedText(value, state.how) || !GetLearnedText(value, state.by) ||
      !storage::GetVarint64(value, changes) || !value.empty() || changes > UINT32_MAX) {
    return MalformedState();
  }
  state.time_ms = static_cast<std::int64_t>(time);
  state.changes = static_cast<std::uint32_t>(changes);
  return state;
}

bool LearnedMatches(std::string_view filter, const std::optional<LearnedState>& state) {
  const bool learned_now = state && !state->forgotten;
  if (filter == "yes") return learned_now;
  if (filter == "no") return !learned_now;
  if (filter == "forgotten") return state && state->forgotten;
  if (filter == "checked") return learned_now && state->checked;
  return learned_now && state->label == filter;
}

}  // namespace nbspamd::history
