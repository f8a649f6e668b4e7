// JoinClusterIfNeeded: a daemon in cluster mode that starts with no model, or with a model the
// training stream was trimmed past, fetches a checkpoint from a live peer (cluster_join_from)
// and puts it in place of its model before opening it; the daemon then replays the stream from
// the checkpoint's position as usual (docs/SCALING.md "Joining a cluster").
//
//   if (auto joined = server::JoinClusterIfNeeded(settings); !joined) exit 1 with its message
//
// Peers are asked in turn: POST /admin/checkpoint for a manifest, then each file (GET, resumed
// with Range after a broken transfer, restarted once after a wrong SHA-256) into a temporary
// folder beside the data folder; the checkpoint must open and hold the manifest's position,
// which must not be before the trimmed part of the stream. Then a folder already there is
// renamed aside (<data_dir>.before-join-<UTC time>, logged; this daemon's own live settings,
// activity and scan history move back into the new folder) and the checkpoint is renamed into
// its place, and the peer is told it may remove its checkpoint. A peer that does not answer or
// breaks off is asked again every second (resuming the same checkpoint while it lasts) until
// cluster_join_timeout_seconds; one that fails otherwise is given up. A pending SIGTERM or SIGINT
// (blocked by main.cc until the server runs) ends the join at once. Nothing is ever half
// installed: a failure leaves the data folder as it was.
//
// A folder with no model on a stream never trimmed need not join: when no peer gives a
// checkpoint in the first round (none answers yet, as when a new cluster's daemons start
// together) and none refused, the daemon starts empty and replays the whole stream.
//
// Without cluster mode or cluster_join_from: nothing, as before. Redis unreachable while the
// folder holds a model: nothing either (the replicator checks again once Redis answers).
//
// Thread safety: call once, at start-up, before the model is opened. Errors (each one line,
// naming the peer and the cause): kInvalidArgument for an unreadable token or password file;
// when no peer gave a checkpoint, the last peer's error code (kPermissionDenied or
// kUnauthenticated for a refused token, kDataLoss for a wrong checksum, kUnavailable for no
// answer or cluster_join_timeout_seconds passed); kInternal when the folders cannot be renamed.
#ifndef NBSPAMD_SERVER_CLUSTER_JOIN_H_
#define NBSPAMD_SERVER_CLUSTER_JOIN_H_

#include <expected>

#include "common/error.h"
#include "config/settings.h"

namespace nbspamd::server {

[[nodiscard]] std::expected<void, Error> JoinClusterIfNeeded(const config::Settings& settings);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_CLUSTER_JOIN_H_
