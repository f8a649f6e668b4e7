#include "http_api/checkpoint_shelf.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <system_error>
#include <utility>
#include <vector>

#include "common/hex.h"
#include "common/log.h"
#include "common/sha256.h"
#include "storage/rocksdb_folder.h"

namespace nbspamd::http_api {
namespace {

namespace fs = std::filesystem;

std::string NewCheckpointId() {
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i) AppendHex(id, random(), 8);
  return id;
}

// Removes everything in `dir` and makes it again (empty); logs what fails.
void ClearCheckpointDir(const std::string& dir) {
  std::error_code error;
  fs::remove_all(dir, error);
  if (error) LogWarning("cannot clear the checkpoints folder " + dir + ": " + error.message());
  fs::create_directories(dir, error);
  if (error) LogWarning("cannot make the checkpoints folder " + dir + ": " + error.message());
}

// The manifest's files of the checkpoint in `path` (sorted by name) with their digests.
std::expected<std::vector<CheckpointFile>, Error> DigestCheckpoint(const fs::path& path) {
  std::vector<CheckpointFile> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(error) || !IsCheckpointFileName(name)) {
      return MakeError(
          ErrorCode::kInternal,
          "the checkpoint " + path.string() + " holds an entry that is not a plain file: " + name);
    }
    auto digest = Sha256OfFile(entry.path().string());
    if (!digest) return std::unexpected(std::move(digest.error()));
    files.push_back(CheckpointFile{.name = name, .size = digest->size, .sha256 = digest->sha256});
  }
  if (error) {
    return MakeError(ErrorCode::kInternal,
                     "cannot list the checkpoint " + path.string() + ": " + error.message());
  }
  std::ranges::sort(files, {}, &CheckpointFile::name);
  return files;
}

}  // namespace

CheckpointShelf::CheckpointShelf(CheckpointShelfOptions options) : options_(std::move(options)) {
  ClearCheckpointDir(options_.dir);
  sweeper_ = std::thread([this] {
    const auto period = std::clamp<std::chrono::milliseconds>(
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.idle_expiry) / 4,
        std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      Sweep();
      lock.lock();
    }
  });
}

CheckpointShelf::~CheckpointShelf() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
  std::error_code ignored;
  fs::remove_all(options_.dir, ignored);
}

std::size_t CheckpointShelf::Size() const {
  std::lock_guard lock(mutex_);
  return shelved_.size();
}

void CheckpointShelf::Remove(const std::string& id) {
  std::error_code error;
  fs::remove_all(fs::path(options_.dir) / id, error);
  if (error) LogWarning("cannot remove the checkpoint " + id + ": " + error.message());
  shelved_.erase(id);
}

void CheckpointShelf::Sweep() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::string> expired;
  for (const auto& [id, shelved] : shelved_) {
    if (now - shelved.last_used >= options_.idle_expiry) expired.push_back(id);
  }
  for (const std::string& id : expired) {
    Remove(id);
    LogInfo("checkpoint " + id + " removed: unused for " +
            std::to_string(options_.idle_expiry.count()) + " s");
  }
}

std::expected<CheckpointManifest, Error> CheckpointShelf::Make(core::SpamFilter& filter) {
  std::unique_lock making(making_, std::try_to_lock);
  if (!making.owns_lock()) {
    return MakeError(ErrorCode::kUnavailable, "a checkpoint is being made; try again shortly");
  }
  Sweep();
  {
    std::lock_guard lock(mutex_);
    if (shelved_.size() >= options_.max_checkpoints) {
      const auto oldest = std::ranges::min_element(
          shelved_, {}, [](const auto& entry) { return entry.second.last_used; });
      if (std::chrono::steady_clock::now() - oldest->second.last_used < options_.replace_after) {
        return MakeError(ErrorCode::kUnavailable,
                         std::to_string(shelved_.size()) +
                             " checkpoints are being fetched from this daemon; try again later");
      }
      LogInfo("checkpoint " + oldest->first + " removed to make room for a new one");
      Remove(std::string(oldest->first));
    }
  }
  CheckpointManifest manifest;
  manifest.id = NewCheckpointId();
  const fs::path path = fs::path(options_.dir) / manifest.id;
  std::error_code error;
  fs::create_directories(options_.dir, error);
  if (auto made = filter.Backup(path.string()); !made) return std::unexpected(made.error());
  // The position first: opening the checkpoint read-only writes nothing into it.
  auto position = storage::ReadFolderStreamPosition(path.string());
  if (!position) {
    fs::remove_all(path, error);
    return std::unexpected(std::move(position.error()));
  }
  auto files = DigestCheckpoint(path);
  if (!files) {
    fs::remove_all(path, error);
    return std::unexpected(std::move(files.error()));
  }
  manifest.position = std::move(*position);
  manifest.files = std::move(*files);
  std::lock_guard lock(mutex_);
  shelved_[manifest.id] =
      Shelved{.manifest = manifest, .last_used = std::chrono::steady_clock::now()};
  return manifest;
}

std::expected<void, Error> CheckpointShelf::Release(std::string_view id) {
  if (!IsCheckpointId(id)) {
    return MakeError(ErrorCode::kInvalidArgument, "a checkpoint id is 32 lower-case hex digits");
  }
  std::lock_guard lock(mutex_);
  if (!shelved_.contains(std::string(id))) {
    return MakeError(ErrorCode::kNotFound, "no checkpoint " + std::string(id) + " here");
  }
  Remove(std::string(id));
  return {};
}

std::expected<CheckpointShelf::Lent, Error> CheckpointShelf::Lend(std::string_view id,
                                                                  std::string_view name) {
  if (!IsCheckpointId(id)) {
    return MakeError(ErrorCode::kInvalidArgument, "a checkpoint id is 32 lower-case hex digits");
  }
  if (!IsCheckpointFileName(name)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a checkpoint file name is 1 to 128 of A-Z a-z 0-9 . _ -, not starting "
                     "with '.'");
  }
  std::lock_guard lock(mutex_);
  const auto shelved = shelved_.find(std::string(id));
  if (shelved == shelved_.end()) {
    return MakeError(ErrorCode::kNotFound,
                     "no checkpoint " + std::string(id) +
                         " here (unused for too long, or the daemon restarted): ask for a new one");
  }
  const auto& files = shelved->second.manifest.files;
  const auto file = std::ranges::find(files, name, &CheckpointFile::name);
  if (file == files.end()) {
    return MakeError(ErrorCode::kNotFound,
                     "checkpoint " + std::string(id) + " has no file " + std::string(name));
  }
  shelved->second.last_used = std::chrono::steady_clock::now();
  const fs::path link = fs::path(options_.dir) / (".send-" + std::to_string(++links_));
  std::error_code error;
  fs::create_hard_link(fs::path(options_.dir) / id / name, link, error);
  if (error) {
    return MakeError(ErrorCode::kInternal, "cannot link " + std::string(name) + " of checkpoint " +
                                               std::string(id) +
                                               " for sending: " + error.message());
  }
  return Lent{.path = link.string(), .size = file->size};
}

}  // namespace nbspamd::http_api
