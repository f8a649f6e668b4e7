#include "client/message_source.h"

#include <system_error>
#include <utility>

namespace nbspamd::client {
namespace fs = std::filesystem;
namespace {

constexpr auto kWalkOptions = fs::directory_options::skip_permission_denied;

bool IsHidden(const fs::path& path) { return path.filename().string().starts_with('.'); }

// Whether the walk enters `directory`, found under `parent`: inside a Maildir only cur/ and
// new/ are messages (tmp/ holds deliveries in progress, .Folder/ are other folders).
bool ShouldEnter(const fs::path& parent, const fs::path& directory) {
  if (!IsMaildir(parent)) return true;
  const fs::path name = directory.filename();
  return name == "cur" || name == "new";
}

// Whether a file found by the walk is a message: not hidden, and not one of the files a mail
// server keeps at the top of a Maildir (dovecot-uidlist, subscriptions …).
bool IsMessageFile(const fs::directory_entry& entry) {
  std::error_code ec;
  if (!entry.is_regular_file(ec) || IsHidden(entry.path())) return false;
  return !IsMaildir(entry.path().parent_path());
}

// Advances `walk` to the next message file, pruning directories not to enter.
std::optional<fs::path> NextFile(fs::recursive_directory_iterator& walk) {
  std::error_code ec;
  for (const fs::recursive_directory_iterator end; walk != end; walk.increment(ec)) {
    if (ec) return std::nullopt;
    const fs::directory_entry& entry = *walk;
    if (entry.is_directory(ec)) {
      if (!ShouldEnter(entry.path().parent_path(), entry.path())) walk.disable_recursion_pending();
      continue;
    }
    if (IsMessageFile(entry)) {
      fs::path path = entry.path();
      walk.increment(ec);
      if (ec) walk = fs::recursive_directory_iterator();
      return path;
    }
  }
  return std::nullopt;
}

Message UnreadableSource(const fs::path& path, std::string reason) {
  return Message{path.string(), "", 0, std::move(reason)};
}

std::string TooLarge(std::uint64_t size, std::size_t limit) {
  return "the message is " + std::to_string(size) + " bytes, over the limit of " +
         std::to_string(limit) + " bytes (--max-size)";
}

}  // namespace

bool IsMaildir(const fs::path& directory) {
  std::error_code ec;
  return fs::is_directory(directory / "cur", ec) && fs::is_directory(directory / "new", ec);
}

MessageSource::MessageSource(std::vector<fs::path> paths, std::size_t max_message_bytes)
    : paths_(std::move(paths)), max_message_bytes_(max_message_bytes) {}

MessageSource::~MessageSource() = default;

std::optional<Message> MessageSource::Next() {
  while (true) {
    if (mbox_) {
      if (std::optional<MboxMessage> part = mbox_->Next()) {
        Message message{mbox_path_ + "#" + std::to_string(part->number), std::move(part->body),
                        part->consumed, std::nullopt};
        if (part->too_large) message.error = TooLarge(part->size, max_message_bytes_);
        if (mbox_file_->bad()) message.error = "read error";
        return message;
      }
      mbox_.reset();
      mbox_file_.reset();
      continue;
    }
    if (walk_) {
      if (std::optional<fs::path> file = NextFileInWalk()) {
        if (std::optional<Message> message = OpenFile(*file)) return message;
        continue;  // An mbox: its messages come next.
      }
      walk_.reset();
      continue;
    }
    if (next_path_ == paths_.size()) return std::nullopt;
    const fs::path& path = paths_[next_path_++];
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      return UnreadableSource(path, "no such file or directory");
    }
    if (fs::is_directory(status)) {
      walk_.emplace(path, kWalkOptions, ec);
      if (ec) {
        walk_.reset();
        return UnreadableSource(path, "cannot read the directory: " + ec.message());
      }
      continue;
    }
    if (std::optional<Message> message = OpenFile(path)) return message;
  }
}

std::optional<fs::path> MessageSource::NextFileInWalk() { return NextFile(*walk_); }

std::optional<Message> MessageSource::OpenFile(const fs::path& path) {
  Message message{path.string(), "", 0, std::nullopt};
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) {
    message.error = "cannot open the file";
    return message;
  }
  char start[5] = {};
  file->read(start, sizeof start);
  const bool is_mbox = file->gcount() == 5 && IsMboxSeparator(std::string_view(start, 5));
  file->clear();
  file->seekg(0);
  if (is_mbox) {
    mbox_file_ = std::move(file);
    mbox_ = std::make_unique<MboxReader>(*mbox_file_, max_message_bytes_);
    mbox_path_ = path.string();
    return std::nullopt;
  }
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    message.error = "cannot read the file: " + ec.message();
    return message;
  }
  message.consumed = size;
  if (size > max_message_bytes_) {
    message.error = TooLarge(size, max_message_bytes_);
    return message;
  }
  message.body.resize(size);
  file->read(message.body.data(), static_cast<std::streamsize>(size));
  message.body.resize(static_cast<std::size_t>(file->gcount()));
  if (file->bad()) message.error = "read error";
  return message;
}

std::optional<std::uint64_t> TotalInputBytes(const std::vector<fs::path>& paths,
                                             std::stop_token stop) {
  std::uint64_t total = 0;
  for (const fs::path& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      fs::recursive_directory_iterator walk(path, kWalkOptions, ec);
      if (ec) continue;
      while (std::optional<fs::path> file = NextFile(walk)) {
        if (stop.stop_requested()) return std::nullopt;
        const std::uintmax_t size = fs::file_size(*file, ec);
        if (!ec) total += size;
      }
    } else {
      const std::uintmax_t size = fs::file_size(path, ec);
      if (!ec) total += size;
    }
  }
  return total;
}

}  // namespace nbspamd::client
