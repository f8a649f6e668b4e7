// CheckpointShelf: the checkpoints this daemon serves to daemons joining its cluster
// (POST /admin/checkpoint, GET /admin/checkpoint/{id}/{file}; docs/SCALING.md "Joining a
// cluster"). Each is a RocksDB checkpoint (hard links where it can) in a folder of its own under
// `dir`, with its manifest: the stream position read from the checkpoint itself (not from the
// live model, which moves on) and every file's size and SHA-256.
//
//   CheckpointShelf shelf({.dir = data_dir + "/checkpoints-served"});  // clears the folder
//   auto manifest = shelf.Make(filter);              // kUnavailable when the shelf is full
//   auto file = shelf.Lend(manifest->id, "CURRENT");  // a link to send, then remove
//   shelf.Release(manifest->id);                       // the joining daemon is done with it
//
// At most `max_checkpoints` at once; each is removed once unused for `idle_expiry` (a background
// thread looks every few seconds), and a new one replaces the least recently used one only when
// that one has been idle for `replace_after`. Everything under `dir` is removed at construction
// and destruction: only the shelf writes there.
//
// Thread safety: every member from any thread; one Make runs at a time. Errors: Make answers
// kUnavailable when the shelf is full of checkpoints in use or another Make is running (try
// again), the store's errors for the checkpoint itself, kInternal for I/O; Lend kInvalidArgument
// for a malformed id or file name, kNotFound for an unknown (or expired) checkpoint or a file it
// does not have, kInternal for I/O.
#ifndef NBSPAMD_HTTP_API_CHECKPOINT_SHELF_H_
#define NBSPAMD_HTTP_API_CHECKPOINT_SHELF_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/error.h"
#include "core/spam_filter.h"
#include "http_api/checkpoint_manifest.h"

namespace nbspamd::http_api {

// The shelf's folder in the daemon's data folder.
inline constexpr char kCheckpointShelfFolder[] = "checkpoints-served";

struct CheckpointShelfOptions {
  std::string dir;  // REQUIRES: not empty; on the model's file system for hard links.
  std::size_t max_checkpoints = 2;
  std::chrono::seconds idle_expiry{300};
  std::chrono::seconds replace_after{60};
};

class CheckpointShelf {
 public:
  explicit CheckpointShelf(CheckpointShelfOptions options);
  CheckpointShelf(const CheckpointShelf&) = delete;
  CheckpointShelf& operator=(const CheckpointShelf&) = delete;
  ~CheckpointShelf();

  // A new checkpoint of `filter`'s model (every train acknowledged before the call is in it)
  // and its manifest. Reads every file once for its SHA-256: seconds for a large model.
  [[nodiscard]] std::expected<CheckpointManifest, Error> Make(core::SpamFilter& filter);

  struct Lent {
    std::string path;  // A new hard link to the file: the caller sends it, then removes it.
    std::uint64_t size = 0;
  };
  // File `name` of checkpoint `id`, which counts as used now.
  [[nodiscard]] std::expected<Lent, Error> Lend(std::string_view id, std::string_view name);

  // Removes checkpoint `id` (its joining daemon has it, or gave it up). Errors as Lend's.
  [[nodiscard]] std::expected<void, Error> Release(std::string_view id);

  // Checkpoints on the shelf now.
  [[nodiscard]] std::size_t Size() const;

 private:
  struct Shelved {
    CheckpointManifest manifest;
    std::chrono::steady_clock::time_point last_used;
  };
  void Sweep();
  // Removes checkpoint `id`'s folder. REQUIRES: mutex_ held.
  void Remove(const std::string& id);

  const CheckpointShelfOptions options_;
  std::mutex making_;  // One Make at a time.
  mutable std::mutex mutex_;
  std::map<std::string, Shelved> shelved_;  // By id. Guarded by mutex_.
  std::uint64_t links_ = 0;                 // Guarded by mutex_.
  bool stopping_ = false;                   // Guarded by mutex_.
  std::condition_variable wake_;
  std::thread sweeper_;
};

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_CHECKPOINT_SHELF_H_
