// The training stream's wire format: how one StreamEvent (a TrainingChange and who waits for it)
// becomes the bytes of one Redis Stream field, and back.
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
// Version 2 carries the changes to a user's layer (issue 14); a change to the global model alone
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
#ifndef NBSPAMD_REPLICATION_STREAM_CODEC_H_
#define NBSPAMD_REPLICATION_STREAM_CODEC_H_

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"
#include "core/training_log.h"

namespace nbspamd::replication {

// Do not change: on the wire. Bumped whenever the encoding above changes. Events without a user
// are written as kStreamEventVersionGlobal, the others as kStreamEventVersion.
inline constexpr std::uint8_t kStreamEventVersion = 2;
inline constexpr std::uint8_t kStreamEventVersionGlobal = 1;

// One training event as the stream carries it: the change and who waits for it.
struct StreamEvent : core::TrainingChange {
  // Who waits for this event to be applied: "<daemon name>/<incarnation>/<sequence>", or "".
  std::string waiter;

  friend bool operator==(const StreamEvent&, const StreamEvent&) = default;
};

// Pure and thread-safe. REQUIRES: a learn has a label; a delete user has a user; train_global
// is false without a user (the global model is the change itself).
[[nodiscard]] std::string EncodeStreamEvent(const StreamEvent& event);
// Errors: kDataLoss for bytes that are not a version-1 or version-2 event (truncated, trailing
// bytes, unknown version or kind, no id, a learn without a label, a version-2 event without a
// user, a delete user with an id or train_global).
[[nodiscard]] std::expected<StreamEvent, Error> DecodeStreamEvent(std::string_view bytes);

}  // namespace nbspamd::replication

#endif  // NBSPAMD_REPLICATION_STREAM_CODEC_H_
