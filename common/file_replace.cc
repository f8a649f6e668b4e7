#include "common/file_replace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace nbspamd {
namespace {

std::unexpected<Error> Unavailable(const std::string& path, std::string_view step) {
  return MakeError(ErrorCode::kUnavailable,
                   "cannot write " + path + ": " + std::string(step) + ": " + std::strerror(errno));
}

// Writes `contents` to a new file `path`, synced.
std::expected<void, Error> WriteSynced(const std::string& path, std::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable(path, "open");
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t wrote = ::write(fd, contents.data() + done, contents.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      auto failed = Unavailable(path, "write");
      ::close(fd);
      return failed;
    }
    done += static_cast<std::size_t>(wrote);
  }
  if (::fsync(fd) != 0) {
    auto failed = Unavailable(path, "fsync");
    ::close(fd);
    return failed;
  }
  if (::close(fd) != 0) return Unavailable(path, "close");
  return {};
}

std::expected<void, Error> SyncFolder(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Unavailable(folder, "open");
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) return Unavailable(folder, "fsync");
  return {};
}

}  // namespace

std::expected<void, Error> ReplaceFile(const std::string& path, std::string_view contents) {
  const std::string partial = path + ".new";
  if (auto written = WriteSynced(partial, contents); !written) {
    ::unlink(partial.c_str());
    return written;
  }
  if (::rename(partial.c_str(), path.c_str()) != 0) {
    auto failed = Unavailable(path, "rename");
    ::unlink(partial.c_str());
    return failed;
  }
  return SyncFolder(path);
}

std::expected<void, Error> RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Unavailable(path, "unlink");
  return SyncFolder(path);
}

}  // namespace nbspamd
