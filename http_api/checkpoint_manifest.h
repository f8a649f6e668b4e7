// CheckpointManifest: what POST /admin/checkpoint answers and a joining daemon reads
// (docs/API.md, docs/SCALING.md "Joining a cluster"): the checkpoint's id, the stream position
// its model holds, and each of its files' name, size and SHA-256.
//
//   {"id": "3f0c...", "position": "1733390000000-0",
//    "files": [{"name": "CURRENT", "size": 16, "sha256": "9b1f..."}, ...]}
//
// The names are also what GET /admin/checkpoint/{id}/{file} accepts, so they are checked on both
// sides: a file name is plain (IsCheckpointFileName: no '/', no leading '.', nothing to escape),
// which is what keeps a request from reaching outside its checkpoint's folder.
//
// Pure functions; thread-safe. Errors: ParseCheckpointManifest answers kInvalidArgument naming
// what is wrong (not JSON, a missing or malformed field, a bad or repeated name, no CURRENT).
#ifndef NBSPAMD_HTTP_API_CHECKPOINT_MANIFEST_H_
#define NBSPAMD_HTTP_API_CHECKPOINT_MANIFEST_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace nbspamd::http_api {

struct CheckpointFile {
  std::string name;
  std::uint64_t size = 0;
  std::string sha256;  // 64 lower-case hex digits.

  friend bool operator==(const CheckpointFile&, const CheckpointFile&) = default;
};

struct CheckpointManifest {
  std::string id;        // IsCheckpointId.
  std::string position;  // The model's stream position ("" before any): "MS-SEQ".
  std::vector<CheckpointFile> files;

  [[nodiscard]] std::uint64_t TotalBytes() const;
  friend bool operator==(const CheckpointManifest&, const CheckpointManifest&) = default;
};

// 32 lower-case hex digits (128 random bits).
[[nodiscard]] bool IsCheckpointId(std::string_view id);

// 1 to 128 characters of A-Z a-z 0-9 . _ -, not starting with '.': the flat names RocksDB gives
// a checkpoint's files (CURRENT, MANIFEST-000005, 000012.sst, ...). "..", "a/b", "%2e" are not.
[[nodiscard]] bool IsCheckpointFileName(std::string_view name);

// "" or two decimal numbers joined by '-', as a stream entry id.
[[nodiscard]] bool IsStreamPositionText(std::string_view position);

// The first byte a Range header value of the form "bytes=N-" asks for (how a joining daemon
// resumes a file); nullopt for any other form, which is answered with the whole file.
[[nodiscard]] std::optional<std::uint64_t> ParseRangeFrom(std::string_view range);

[[nodiscard]] std::string CheckpointManifestJson(const CheckpointManifest& manifest);

// A manifest from its JSON, every field checked; the files must include CURRENT.
[[nodiscard]] std::expected<CheckpointManifest, Error> ParseCheckpointManifest(
    std::string_view json);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_CHECKPOINT_MANIFEST_H_
