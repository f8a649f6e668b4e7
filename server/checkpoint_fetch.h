// The joining side of POST /admin/checkpoint and GET /admin/checkpoint/{id}/{file}
// (http_api/checkpoint_shelf.h): asks a peer daemon for a checkpoint's manifest, and downloads
// one of its files into a local file, streamed to disk, resuming (Range: bytes=N-) from what the
// local file already holds, then checks its size and SHA-256 against the manifest.
//
//   PeerRequest peer{.peer = *config::ParseJoinPeers(url)->begin(), .token = token,
//                    .deadline = now + 10min};
//   auto manifest = RequestCheckpoint(peer);
//   for (const auto& file : manifest->files) FetchCheckpointFile(peer, manifest->id, file, path);
//
// Blocking, one connection a call (TLS for an https:// peer, its certificate checked against
// `ca_file` and its host name), each read or write bounded by `io_timeout` and the whole by
// `deadline`; the token goes in an Authorization header and nowhere else.
// Thread safety: the functions are thread-safe (each call has its own I/O context).
// Errors: kUnauthenticated (the peer wants a token) and kPermissionDenied (it refused ours);
// kUnavailable when it does not answer, answers 5xx, or the transfer breaks or times out (what
// arrived stays in the file, for a resume); kNotFound when the checkpoint or file is gone there
// (ask for a new one); kInvalidArgument for an answer that is not a manifest; kDataLoss when a
// whole file's size or SHA-256 is not the manifest's (the file is removed); kFailedPrecondition
// when the peer serves no checkpoints or TLS refused the handshake (an untrusted certificate);
// kInvalidArgument for a CA file that cannot be read; kInternal for a local file that cannot be
// written.
// Every message names the peer's URL.
#ifndef NBSPAMD_SERVER_CHECKPOINT_FETCH_H_
#define NBSPAMD_SERVER_CHECKPOINT_FETCH_H_

#include <chrono>
#include <expected>
#include <functional>
#include <string>

#include "common/error.h"
#include "config/join_peers.h"
#include "http_api/checkpoint_manifest.h"

namespace nbspamd::server {

struct PeerRequest {
  config::JoinPeer peer;
  std::string token;  // Bearer token; "" = none. Never logged.
  // For an https:// peer: PEM CA certificates its certificate must chain to ("" = the system's).
  std::string ca_file;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::milliseconds io_timeout{30000};  // Each read or write must progress within it.
  // Asked between reads: true ends the transfer (kUnavailable). None: never.
  std::function<bool()> stop;
};

[[nodiscard]] std::expected<http_api::CheckpointManifest, Error> RequestCheckpoint(
    const PeerRequest& request);

// Tells the peer it may remove checkpoint `id` (DELETE /admin/checkpoint/{id}): fetched, or given
// up. Errors as RequestCheckpoint's; the caller may ignore them (the peer removes it anyway a few
// minutes after its last use).
[[nodiscard]] std::expected<void, Error> ReleaseCheckpoint(const PeerRequest& request,
                                                           const std::string& id);

// Downloads `file` of checkpoint `id` into `path` (resuming from the bytes it already holds) and
// checks it. Returns the bytes received over the network by this call.
[[nodiscard]] std::expected<std::uint64_t, Error> FetchCheckpointFile(
    const PeerRequest& request, const std::string& id, const http_api::CheckpointFile& file,
    const std::string& path);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_CHECKPOINT_FETCH_H_
