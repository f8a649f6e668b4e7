#include "server/cluster_join.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "config/join_peers.h"
#include "config/live_settings.h"
#include "core/activity_file.h"
#include "http_api/checkpoint_manifest.h"
#include "replication/redis_client.h"
#include "replication/trim_floor.h"
#include "server/checkpoint_fetch.h"
#include "server/cluster_options.h"
#include "storage/rocksdb_folder.h"

namespace nbspamd::server {
namespace {

namespace fs = std::filesystem;

// Broken transfers of one file, each resumed where it broke off, before the peer counts as
// failing for this round.
constexpr int kJoinResumesPerFile = 5;
constexpr auto kJoinRoundPause = std::chrono::seconds(1);
// This daemon's own entries of its data folder, not the model's: they follow it into the new one.
constexpr std::array<std::string_view, 3> kDaemonOwnEntries = {config::kLiveSettingsFile,
                                                               core::kActivityFile, "history"};

// "<stream>:trimmed": the largest entry id trimming deleted ("" when none). kUnavailable when
// Redis cannot be asked.
std::expected<std::string, Error> TrimmedThrough(replication::RedisClient& redis,
                                                 const std::string& stream) {
  auto trimmed = redis.Command({"GET", stream + ":trimmed"});
  if (!trimmed) return std::unexpected(std::move(trimmed.error()));
  return trimmed->type == replication::RedisReply::Type::kString ? trimmed->text : std::string();
}

std::string PositionText(const std::string& position) {
  return position.empty() ? std::string("the beginning") : position;
}

// Why this daemon joins ("": it need not), and whether it may start without a checkpoint: a
// folder with no model, on a stream never trimmed, can replay the whole stream instead (the
// first daemons of a new cluster, whose peers have nothing to give yet).
struct JoinNeed {
  std::string reason;
  bool optional = false;
};

JoinNeed JoinReason(const config::Settings& settings, const fs::path& dir,
                    replication::RedisClient& redis) {
  std::error_code error;
  if (!fs::exists(dir / "CURRENT", error)) {
    auto trimmed = TrimmedThrough(redis, settings.cluster_stream);
    return {.reason = "no model in " + dir.string(), .optional = trimmed && trimmed->empty()};
  }
  auto position = storage::ReadFolderStreamPosition(dir.string());
  if (!position) return {};  // Opening the model reports it.
  auto trimmed = TrimmedThrough(redis, settings.cluster_stream);
  if (!trimmed) {
    LogWarning("cluster join: cannot tell whether the stream was trimmed past the model (" +
               trimmed.error().message + "); starting on the model as it is");
    return {};
  }
  if (!replication::TrimmedPast(*trimmed, *position)) return {};
  return {.reason = "the stream '" + settings.cluster_stream + "' was trimmed through " + *trimmed +
                    " but the model in " + dir.string() + " ends at " + PositionText(*position),
          .optional = false};
}

// Whether SIGTERM or SIGINT is pending. main.cc blocks them before the join (the server takes
// them later), so a stop asked for meanwhile waits: the join gives up on it instead.
bool JoinStopRequested() {
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return false;
  return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1;
}

std::unexpected<Error> JoinStopped() {
  return MakeError(ErrorCode::kUnavailable, "stopped by a signal while joining");
}

// fsync of a file or folder; false when it fails.
bool SyncJoinPath(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced;
}

// Lets the peer remove checkpoint `id` now rather than minutes later; a failure only logged.
void ReleaseJoinCheckpoint(const PeerRequest& request, const std::string& id) {
  if (auto released = ReleaseCheckpoint(request, id); !released) {
    LogInfo("cluster join: " + released.error().message + " (it removes the checkpoint by itself)");
  }
}

struct FetchedCheckpoint {
  http_api::CheckpointManifest manifest;
  std::uint64_t received = 0;  // Bytes over the network.
};

// What the join knows of a peer between attempts: the checkpoint it made for this daemon, kept
// while it lasts so that an attempt after a broken one resumes it rather than asking for another
// (which would fill the peer's shelf), and whether the peer was given up.
struct PeerState {
  std::optional<http_api::CheckpointManifest> manifest;
  bool given_up = false;
};

// Downloads into `folder` the checkpoint `peer.manifest`, or a new one asked for when there is
// none, and checks it; `folder_id` is the checkpoint whose files the folder holds (a folder of
// another's is emptied first). A checkpoint the peer no longer has is forgotten (kNotFound).
std::expected<FetchedCheckpoint, Error> FetchCheckpoint(const PeerRequest& request,
                                                        const fs::path& folder, PeerState& peer,
                                                        std::string& folder_id) {
  if (!peer.manifest) {
    auto manifest = RequestCheckpoint(request);
    if (!manifest) {
      if (manifest.error().code == ErrorCode::kNotFound) {  // No such endpoint there.
        manifest.error().code = ErrorCode::kFailedPrecondition;
      }
      return std::unexpected(std::move(manifest.error()));
    }
    LogInfo("cluster join: " + request.peer.url + " made checkpoint " + manifest->id +
            " at position " + PositionText(manifest->position) + ": " +
            std::to_string(manifest->files.size()) + " files, " +
            std::to_string(manifest->TotalBytes()) + " bytes");
    peer.manifest = std::move(*manifest);
  }
  std::error_code error;
  if (folder_id != peer.manifest->id) {
    fs::remove_all(folder, error);
    folder_id = peer.manifest->id;
  }
  fs::create_directories(folder, error);
  if (error) {
    return MakeError(ErrorCode::kInternal,
                     "cannot make the folder " + folder.string() + ": " + error.message());
  }
  FetchedCheckpoint fetched{.manifest = *peer.manifest};
  for (const http_api::CheckpointFile& file : fetched.manifest.files) {
    if (JoinStopRequested()) return JoinStopped();
    const fs::path path = folder / file.name;  // A plain name: ParseCheckpointManifest checked.
    int resumes = 0;
    bool restarted = false;
    while (true) {
      auto got = FetchCheckpointFile(request, fetched.manifest.id, file, path.string());
      if (got) {
        fetched.received += *got;
        break;
      }
      const ErrorCode code = got.error().code;
      const bool retry = (code == ErrorCode::kDataLoss && !restarted) ||
                         (code == ErrorCode::kUnavailable && ++resumes <= kJoinResumesPerFile &&
                          std::chrono::steady_clock::now() < request.deadline);
      if (code == ErrorCode::kNotFound) peer.manifest.reset();  // Gone there: ask anew.
      if (!retry || JoinStopRequested()) return std::unexpected(std::move(got.error()));
      restarted = restarted || code == ErrorCode::kDataLoss;
      LogWarning("cluster join: " + got.error().message +
                 (code == ErrorCode::kDataLoss ? "; fetching it again" : "; resuming"));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (!SyncJoinPath(path)) {
      return MakeError(ErrorCode::kInternal, "cannot write " + path.string() + " to disk");
    }
  }
  auto position = storage::ReadFolderStreamPosition(folder.string());
  if (!position) {
    return MakeError(ErrorCode::kDataLoss, request.peer.url + ": its checkpoint " +
                                               fetched.manifest.id +
                                               " does not open: " + position.error().message);
  }
  if (*position != fetched.manifest.position) {
    return MakeError(ErrorCode::kDataLoss, request.peer.url + ": its checkpoint holds position " +
                                               PositionText(*position) + ", not the manifest's " +
                                               PositionText(fetched.manifest.position));
  }
  return fetched;
}

std::string JoinStamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return stamp;
}

// Puts the checked checkpoint in `fetched` in place of the folder `dir`; a folder there with
// anything in it is renamed aside first. Returns where it went ("" when there was none).
std::expected<std::string, Error> InstallCheckpoint(const fs::path& fetched, const fs::path& dir) {
  std::error_code error;
  fs::path aside;
  if (fs::exists(dir, error)) {
    if (fs::is_directory(dir, error) && fs::is_empty(dir, error)) {
      fs::remove(dir, error);
    } else {
      aside = dir.string() + ".before-join-" + JoinStamp();
      for (int n = 2; fs::exists(aside, error); ++n) {
        aside = dir.string() + ".before-join-" + JoinStamp() + "-" + std::to_string(n);
      }
      fs::rename(dir, aside, error);
      if (error) {
        return MakeError(ErrorCode::kInternal, "cannot move " + dir.string() + " aside to " +
                                                   aside.string() + ": " + error.message());
      }
      for (const std::string_view own : kDaemonOwnEntries) {
        if (!fs::exists(aside / own, error)) continue;
        fs::rename(aside / own, fetched / own, error);
        if (error) {
          LogWarning("cluster join: cannot carry " + std::string(own) + " over from " +
                     aside.string() + ": " + error.message());
        }
      }
    }
  }
  fs::rename(fetched, dir, error);
  if (error) {
    const std::string failed = error.message();
    if (!aside.empty()) fs::rename(aside, dir, error);  // Back as it was.
    return MakeError(ErrorCode::kInternal, "cannot move the checkpoint " + fetched.string() +
                                               " into place as " + dir.string() + ": " + failed);
  }
  (void)SyncJoinPath(dir.parent_path());
  return aside.string();
}

}  // namespace

std::expected<void, Error> JoinClusterIfNeeded(const config::Settings& settings) {
  if (!config::InClusterMode(settings) || settings.cluster_join_from.empty()) return {};
  const std::vector<config::JoinPeer> peers =
      config::ParseJoinPeers(settings.cluster_join_from).value_or(std::vector<config::JoinPeer>{});
  std::string token;
  if (!settings.cluster_join_token_file.empty()) {
    auto read = ReadSecretFile(settings.cluster_join_token_file, "cluster_join_token_file");
    if (!read) return std::unexpected(std::move(read.error()));
    token = std::move(*read);
  }
  auto options = ClusterOptionsOf(settings);
  if (!options) return std::unexpected(std::move(options.error()));
  replication::RedisClient redis(options->Target(), std::chrono::seconds(5));
  fs::path dir = fs::absolute(settings.data_dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  const JoinNeed need = JoinReason(settings, dir, redis);
  const std::string& reason = need.reason;
  if (reason.empty()) return {};

  LogInfo("cluster join: " + reason + "; fetching a checkpoint from " + settings.cluster_join_from);
  const auto begin = std::chrono::steady_clock::now();
  const auto deadline = begin + std::chrono::seconds(settings.cluster_join_timeout_seconds);
  const fs::path fetching = dir.parent_path() / ("." + dir.filename().string() + ".joining");
  // Each peer's state and last error, in the order of cluster_join_from.
  std::vector<PeerState> states(peers.size());
  std::vector<std::optional<Error>> failures(peers.size());
  std::string folder_id;
  while (true) {
    bool transient = false;
    for (std::size_t p = 0; p < peers.size(); ++p) {
      if (JoinStopRequested()) break;
      if (states[p].given_up) continue;
      const config::JoinPeer& peer = peers[p];
      const PeerRequest request{.peer = peer,
                                .token = token,
                                .ca_file = settings.cluster_join_ca_file,
                                .deadline = deadline,
                                .stop = &JoinStopRequested};
      auto fetched = FetchCheckpoint(request, fetching, states[p], folder_id);
      if (fetched) {
        auto trimmed = TrimmedThrough(redis, settings.cluster_stream);
        if (trimmed && replication::TrimmedPast(*trimmed, fetched->manifest.position)) {
          fetched = MakeError(
              ErrorCode::kFailedPrecondition,
              peer.url + ": its checkpoint ends at " + PositionText(fetched->manifest.position) +
                  ", before the trimmed part of the stream (through " + *trimmed + ")");
        }
      }
      if (fetched) {
        auto aside = InstallCheckpoint(fetching, dir);
        if (aside) ReleaseJoinCheckpoint(request, fetched->manifest.id);
        if (!aside) return std::unexpected(std::move(aside.error()));
        if (!aside->empty()) {
          LogWarning("cluster join: the folder that was in " + dir.string() + " is now " + *aside);
        }
        char seconds[32];
        std::snprintf(
            seconds, sizeof seconds, "%.2f",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
        LogInfo("cluster join: joined from " + peer.url + ": checkpoint " + fetched->manifest.id +
                " at position " + PositionText(fetched->manifest.position) + ", " +
                std::to_string(fetched->manifest.TotalBytes()) + " bytes (" +
                std::to_string(fetched->received) + " fetched) in " + seconds +
                " s; the stream is replayed from there");
        return {};
      }
      LogWarning("cluster join: " + fetched.error().message);
      // No answer, a broken transfer, a full shelf, a checkpoint gone: asked again next round.
      // Anything else (a refused token, a damaged file twice, ...) gives the peer up.
      const bool again = fetched.error().code == ErrorCode::kUnavailable ||
                         fetched.error().code == ErrorCode::kNotFound;
      transient = transient || again;
      states[p].given_up = !again;
      if (!again && states[p].manifest) {
        ReleaseJoinCheckpoint(request, states[p].manifest->id);
        states[p].manifest.reset();
      }
      failures[p] = std::move(fetched.error());
    }
    if (need.optional && !JoinStopRequested() &&
        std::none_of(states.begin(), states.end(),
                     [](const PeerState& state) { return state.given_up; })) {
      // No peer has a checkpoint to give yet (a new cluster's daemons starting together): the
      // stream was never trimmed, so it holds everything from the beginning.
      std::error_code ignored;
      fs::remove_all(fetching, ignored);
      LogInfo("cluster join: no peer of cluster_join_from gave a checkpoint; the stream '" +
              settings.cluster_stream +
              "' was never trimmed, so this daemon replays it from the beginning");
      return {};
    }
    if (!transient || JoinStopRequested() ||
        std::chrono::steady_clock::now() + kJoinRoundPause >= deadline) {
      break;
    }
    for (auto paused = std::chrono::milliseconds(0);
         paused < kJoinRoundPause && !JoinStopRequested();
         paused += std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::error_code ignored;
  fs::remove_all(fetching, ignored);
  if (JoinStopRequested()) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot join the cluster (" + reason + "): stopped by a signal while joining");
  }
  std::string causes;
  ErrorCode code = ErrorCode::kUnavailable;
  for (const std::optional<Error>& failure : failures) {
    if (!failure) continue;
    causes += (causes.empty() ? "" : "; ") + failure->message;
    code = failure->code;
  }
  const bool timed_out = std::chrono::steady_clock::now() + kJoinRoundPause >= deadline;
  return MakeError(
      code, "cannot join the cluster (" + reason + "): " + causes +
                (timed_out ? " (gave up after cluster_join_timeout_seconds, " +
                                 std::to_string(settings.cluster_join_timeout_seconds) + " s)"
                           : ""));
}

}  // namespace nbspamd::server
