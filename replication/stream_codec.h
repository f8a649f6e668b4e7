// The training stream's wire formats: how one StreamEvent (a TrainingChange and who waits for it)
// becomes the bytes of one Redis Stream field, and back; how a stream entry id reads; and the
// position report each daemon writes in "<stream>:positions".
//
// DO NOT CHANGE: every daemon of a cluster, old and new, reads these bytes. The format is this
// codec's own (it does not borrow the storage schema), so a storage schema change leaves the wire
// format as it is. A different format needs a new kStreamEventVersion, and decoding must keep
// accepting the old one until no stream can hold it. stream_codec_test.cc pins the bytes.
//
//   std::string bytes = EncodeStreamEvent(event);
//   std::expected<StreamEvent, Error> back = DecodeStreamEvent(bytes);  // kDataLoss if damaged
//
// Version 1, integers as LEB128 varints (7 bits a byte, low bits first), strings as a varint
// length and the bytes:
//   byte     version (1)
//   byte     kind: 0 learn, 1 forget
//   string   id (never empty)
//   string   waiter ("" when nobody waits)
//   learn:   string holding: string label (never empty), varint token count, per token the hash
//            as 8 bytes big-endian and a varint count, string source, varint learned_at (Unix
//            seconds, never negative). A holder that ends after the tokens has origin {"", 0}.
//   forget:  byte 1 and a string source (a rollback of that source's record only), or byte 0.
// Nothing may follow.
//
// Version 2 carries the changes to a user's layer; a change to the global model alone
// is still written as version 1, byte for byte, so a daemon that reads only version 1 keeps the
// same global model as the others (it skips what it cannot read, user layers, with an error in
// its log):
//   byte     version (2)
//   byte     kind: 0 learn, 1 forget, 2 delete user
//   string   id (never empty; empty for delete user)
//   string   waiter
//   string   user (never empty)
//   byte     train_global: 1 the global model too, 0 not (always 0 for delete user)
//   learn:   as in version 1; forget: as in version 1; delete user: nothing.
// Nothing may follow.
//
// Version 3 carries a step of the model expiry (core/model_expiry.h); a retire covers the global
// ledger and then the users' own ledgers (daemons before the user-layer expiry retire only the
// global one), an expire the global model's tokens, an expire users (kind 5, added later; older
// daemons skip it with an error in their log) the user layers' tokens:
//   byte     version (3)
//   byte     kind: 3 retire, 4 expire, 5 expire users, 6 retire step
//   string   id (always empty)
//   string   waiter
//   retire:  varint learned_before (Unix seconds)
//   retire step (kind 6, added later; older daemons skip it with an error in their log): varint
//            learned_before, byte 1 the users' ledgers or 0 the global one, varint
//            max_records (never 0), string the source index key to start at ("": the first).
//   expire:  varint seen_before (Unix seconds), varint max_count, keep_weight and alpha as IEEE
//            754 bits in 8 bytes big-endian each, the first token hash as 8 bytes big-endian,
//            then byte 1 and the end token hash as 8 bytes big-endian, or byte 0 (to the end).
//   expire users: the rule as for expire, then string first users-family key, then byte 1 and
//            string end key, or byte 0 (to the end).
//   Then, for expire and expire users, byte 1 when the rule keeps every token counted in ham
//   (keep_ham, added later; older daemons skip such an entry with an error in their log), or
//   nothing (the rule does not).
// Nothing may follow.
//
// The token families of a learn (TokenFamily: a word's character n-grams), the value of a field
// of its own, "f", beside the event's: storage::PutBagFamilies of the learn's tokens, written
// only when some token is not a word. Daemons before it read only the event's field and count
// the same tokens (their held-out score takes every token for a word), so turning char_ngrams on
// never makes a cluster's counts differ.
//
// A learn counted whatever the training regime (TrainingChange::count_all, POST /train?count=all)
// has a field "c" with the value "all" beside the event's (replication/cluster.cc writes and reads
// it); any other value, or the field on another kind of event, makes the entry corrupt, skipped
// alike by every daemon. Daemons before it read such a learn as feedback (under their regime), so
// every daemon of a cluster is upgraded before an archive is imported into it.
//
// A position report, the value of a daemon's field in "<stream>:positions": the stream entry id
// it has applied ("0-0" before any), one space, and when it wrote the report (Unix milliseconds,
// decimal). DO NOT CHANGE either: every daemon reads every other's report, and one it cannot parse
// stops all trimming (trim_floor.h).
//
//   std::string value = EncodePositionReport("1700000000000-3", now_ms);  // "1700000000000-3 <ms>"
//   std::expected<PositionReport, Error> report = DecodePositionReport(value);
#ifndef NBSPAMD_REPLICATION_STREAM_CODEC_H_
#define NBSPAMD_REPLICATION_STREAM_CODEC_H_

#include <compare>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "core/training_log.h"

namespace nbspamd::replication {

// Do not change: on the wire. Bumped whenever the encoding above changes. Events without a user
// are written as kStreamEventVersionGlobal, the others as kStreamEventVersion.
inline constexpr std::uint8_t kStreamEventVersion = 2;
inline constexpr std::uint8_t kStreamEventVersionGlobal = 1;
// Steps of the model expiry (kRetire, kExpire) are written as version 3, which older daemons skip
// with an error in their log (their models then differ from the others': upgrade every daemon
// before turning the expiry on).
inline constexpr std::uint8_t kStreamEventVersionExpiry = 3;

// One training event as the stream carries it: the change and who waits for it.
struct StreamEvent : core::TrainingChange {
  // Who waits for this event to be applied: "<daemon name>/<incarnation>/<sequence>", or "".
  std::string waiter;

  friend bool operator==(const StreamEvent&, const StreamEvent&) = default;
};

// A Redis Stream entry id, "MS-SEQ": two decimal integers, ordered as Redis orders entries.
struct StreamId {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;

  // nullopt unless `text` is exactly "<digits>-<digits>", each fitting 64 bits.
  [[nodiscard]] static std::optional<StreamId> Parse(std::string_view text);
  [[nodiscard]] std::string ToString() const;
  friend auto operator<=>(const StreamId&, const StreamId&) = default;
};

// Pure and thread-safe. REQUIRES: a learn has a label; a delete user has a user; train_global
// is false without a user (the global model is the change itself).
[[nodiscard]] std::string EncodeStreamEvent(const StreamEvent& event);
// Errors: kDataLoss for bytes that are not a version-1 or version-2 event (truncated, trailing
// bytes, unknown version or kind, no id, a learn without a label, a version-2 event without a
// user, a delete user with an id or train_global).
[[nodiscard]] std::expected<StreamEvent, Error> DecodeStreamEvent(std::string_view bytes);

// The families field of a learn ("" when every token is a word, or for another kind of event).
[[nodiscard]] std::string EncodeTokenFamilies(const StreamEvent& event);
// Sets the families of a decoded learn's tokens from its families field ("": all words).
// Errors: kDataLoss when `bytes` is not what EncodeTokenFamilies writes for those tokens, or
// comes with another kind of event.
[[nodiscard]] std::expected<void, Error> DecodeTokenFamilies(std::string_view bytes,
                                                             StreamEvent& event);

// A daemon's position report as read back: what it had applied, and when it said so.
struct PositionReport {
  StreamId position;
  std::int64_t seen_ms = 0;  // Unix milliseconds; may be in the future (clocks differ).

  friend bool operator==(const PositionReport&, const PositionReport&) = default;
};

// Pure and thread-safe. `applied` is written as it is, "" as "0-0".
[[nodiscard]] std::string EncodePositionReport(std::string_view applied, std::int64_t seen_ms);
// Errors: kDataLoss for a value that is not "<stream id> <integer>" exactly (no space, a position
// that is not a stream id, a time that is not a whole signed 64-bit decimal, anything after it).
[[nodiscard]] std::expected<PositionReport, Error> DecodePositionReport(std::string_view value);

}  // namespace nbspamd::replication

#endif  // NBSPAMD_REPLICATION_STREAM_CODEC_H_
