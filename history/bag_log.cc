#include "history/bag_log.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <utility>

#include "history/scan_id.h"
#include "storage/encoding.h"

namespace nbspamd::history {
namespace {

constexpr std::string_view kPrefix = "bags-";
constexpr std::size_t kHeaderBytes = 8;
// Scans reach the writer in about the order of their ids, not exactly: a segment goes only once
// the oldest kept scan is this much newer than the next segment's first.
constexpr std::int64_t kOrderSlackMs = 60'000;

std::uint32_t Checksum(std::string_view payload) {
  return static_cast<std::uint32_t>(XXH3_64bits(payload.data(), payload.size()));
}

std::unexpected<Error> FileError(std::string_view what, const std::string& path, int error) {
  return MakeError(
      error == ENOSPC ? ErrorCode::kInsufficientStorage : ErrorCode::kUnavailable,
      "scan history bags: " + std::string(what) + " " + path + ": " + std::strerror(error));
}

// Reads exactly `size` bytes at `offset`; false at the end of the file or on an error (errno).
bool ReadFully(int fd, char* out, std::size_t size, std::uint64_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = 0;
      return false;
    }
    out += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

bool WriteFully(int fd, const char* data, std::size_t size, std::uint64_t offset, bool append) {
  while (size > 0) {
    const ssize_t put =
        append ? ::write(fd, data, size) : ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    size -= static_cast<std::size_t>(put);
    offset += static_cast<std::uint64_t>(put);
  }
  return true;
}

}  // namespace

std::expected<std::unique_ptr<BagLog>, Error> BagLog::Open(std::string dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot create the scan history's bag folder " + dir + ": " + error.message());
  }
  std::set<std::string> segments;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(kPrefix) && ScanIdTime(std::string_view(name).substr(kPrefix.size()))) {
      segments.insert(name.substr(kPrefix.size()));
    }
  }
  if (error) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot read the scan history's bag folder " + dir + ": " + error.message());
  }
  return std::unique_ptr<BagLog>(new BagLog(std::move(dir), std::move(segments)));
}

BagLog::BagLog(std::string dir, std::set<std::string> segments)
    : dir_(std::move(dir)), segments_(std::move(segments)) {}

BagLog::~BagLog() {
  if (!buffer_.empty()) (void)Write();
  CloseSegment();
}

std::string BagLog::PathOf(std::string_view segment) const {
  std::string path = dir_;
  path += '/';
  path += kPrefix;
  path += segment;
  return path;
}

void BagLog::CloseSegment() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  current_.clear();
  written_ = 0;
}

BagLocation BagLog::Append(std::string_view scan_id, std::string_view payload) {
  // A new segment at the first append, past kSegmentBytes, and after a failed write (a restart
  // never appends to an old segment: its tail may be cut).
  if (current_.empty() || written_ + buffer_.size() >= kSegmentBytes) {
    if (!buffer_.empty()) {
      // Records of this batch already appended: their write's failure is the batch's (next
      // Write).
      if (auto written = Write(); !written && !failed_) failed_ = std::move(written.error());
    }
    // A full segment is not written again: to disk now (a failure loses nothing yet).
    (void)Sync();
    CloseSegment();
    current_ = std::string(scan_id);
  }
  const BagLocation where{current_, written_ + buffer_.size(),
                          static_cast<std::uint32_t>(payload.size())};
  const std::size_t at = buffer_.size();
  buffer_.resize(at + kHeaderBytes);
  storage::EncodeFixed32(buffer_.data() + at, where.size);
  storage::EncodeFixed32(buffer_.data() + at + 4, Checksum(payload));
  buffer_.append(payload);
  return where;
}

std::expected<void, Error> BagLog::Write() {
  if (failed_) {
    Error error = std::move(*failed_);
    failed_.reset();
    buffer_.clear();
    CloseSegment();
    return std::unexpected(std::move(error));
  }
  if (buffer_.empty()) return {};
  const std::string path = PathOf(current_);
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd_ < 0) {
      const int error = errno;
      buffer_.clear();
      CloseSegment();
      return FileError("cannot open", path, error);
    }
    segments_.insert(current_);
  }
  if (!WriteFully(fd_, buffer_.data(), buffer_.size(), 0, /*append=*/true)) {
    const int error = errno;
    buffer_.clear();
    CloseSegment();  // Its tail may be cut: later bags go to a new segment.
    return FileError("cannot write", path, error);
  }
  written_ += buffer_.size();
  buffer_.clear();
  return {};
}

std::expected<void, Error> BagLog::Sync() {
  if (fd_ >= 0 && ::fdatasync(fd_) != 0) return FileError("cannot sync", PathOf(current_), errno);
  return {};
}

std::size_t BagLog::DropBefore(std::string_view oldest_kept) {
  const std::optional<std::int64_t> time = ScanIdTime(oldest_kept);
  if (!time) return 0;
  const std::string limit = FirstScanIdAt(*time - kOrderSlackMs);
  std::size_t dropped = 0;
  // A segment's scans are all older than the next segment's first: it goes when that is old.
  while (segments_.size() >= 2) {
    const auto first = segments_.begin();
    const auto next = std::next(first);
    if (*next > limit || *first == current_) break;
    std::error_code error;
    std::filesystem::remove(PathOf(*first), error);
    if (error) break;  // Tried again at the next pass.
    segments_.erase(first);
    ++dropped;
  }
  return dropped;
}

std::expected<void, Error> BagLog::Erase(const BagLocation& where) {
  const std::string path = PathOf(where.segment);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return MakeError(ErrorCode::kNotFound, "no bag segment " + path);
    return FileError("cannot open", path, errno);
  }
  const std::string zeros(where.size, '\0');
  const bool ok = WriteFully(fd, zeros.data(), zeros.size(), where.offset + kHeaderBytes,
                             /*append=*/false) &&
                  ::fdatasync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) return FileError("cannot erase a bag in", path, error);
  return {};
}

std::expected<void, Error> BagLog::EraseAll(std::vector<BagLocation> where) {
  std::ranges::sort(where, {},
                    [](const BagLocation& at) { return std::tie(at.segment, at.offset); });
  for (std::size_t begin = 0; begin < where.size();) {
    std::size_t end = begin;
    while (end < where.size() && where[end].segment == where[begin].segment) ++end;
    const std::string path = PathOf(where[begin].segment);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) return FileError("cannot open", path, errno);
      begin = end;  // Dropped with old scans: nothing left to erase.
      continue;
    }
    bool ok = true;
    for (std::size_t i = begin; ok && i < end; ++i) {
      const std::string zeros(where[i].size, '\0');
      ok = WriteFully(fd, zeros.data(), zeros.size(), where[i].offset + kHeaderBytes,
                      /*append=*/false);
    }
    ok = ok && ::fdatasync(fd) == 0;
    const int error = errno;
    ::close(fd);
    if (!ok) return FileError("cannot erase bags in", path, error);
    begin = end;
  }
  return {};
}

std::expected<std::string, Error> BagLog::Read(const BagLocation& where) const {
  const std::string path = PathOf(where.segment);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return MakeError(ErrorCode::kNotFound, "no bag segment " + path);
    return FileError("cannot open", path, errno);
  }
  char header[kHeaderBytes];
  std::string payload(where.size, '\0');
  const bool read = ReadFully(fd, header, kHeaderBytes, where.offset) &&
                    ReadFully(fd, payload.data(), payload.size(), where.offset + kHeaderBytes);
  const int error = errno;
  ::close(fd);
  if (!read && error != 0) return FileError("cannot read", path, error);
  if (!read || storage::DecodeFixed32(header) != where.size ||
      storage::DecodeFixed32(header + 4) != Checksum(payload)) {
    return MakeError(ErrorCode::kDataLoss, "the bag at " + std::to_string(where.offset) + " in " +
                                               path + " is cut, erased or corrupt");
  }
  return payload;
}

}  // namespace nbspamd::history
