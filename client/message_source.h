// MessageSource: the messages named by nbspamc's PATH arguments, one at a time, in bounded
// memory (one message, one open file and one directory walk at a time; never a list of all
// files or a whole mbox).
//
//   MessageSource source({"~/corpus/spam", "archive.mbox"}, 64 << 20);
//   while (std::optional<Message> message = source.Next()) {
//     if (message->error) Report(*message); else Send(message->body);
//   }
//
// Each PATH is
//   - a message file;
//   - an mbox file: a file whose first line starts with "From " (see MboxReader);
//   - a Maildir: a directory with cur/ and new/; the files of both are read, nothing else;
//   - any other directory: every file under it, recursively, each a message file or an mbox,
//     and each Maildir under it read as a Maildir.
// Files whose names start with '.' are skipped, and so are directories that cannot be read.
// Not thread-safe.
#ifndef NBSPAMD_CLIENT_MESSAGE_SOURCE_H_
#define NBSPAMD_CLIENT_MESSAGE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "client/mbox_reader.h"

namespace nbspamd::client {

// One message to send, or the reason it cannot be.
struct Message {
  std::string path;  // The file, or "FILE#N" for the N-th message of an mbox.
  std::string body;
  std::uint64_t consumed = 0;        // Input bytes it accounts for (for the progress display).
  std::optional<std::string> error;  // Set when it cannot be sent: unreadable or too large.
  std::size_t group = 0;             // train: the index of its label in ClientOptions::groups.
};

class MessageSource {
 public:
  // Messages over `max_message_bytes` are not read: they come back with an error.
  MessageSource(std::vector<std::filesystem::path> paths, std::size_t max_message_bytes);
  MessageSource(const MessageSource&) = delete;
  MessageSource& operator=(const MessageSource&) = delete;
  ~MessageSource();

  // The next message, or nothing when all paths are done.
  [[nodiscard]] std::optional<Message> Next();

 private:
  // Starts reading the file at `path`: returns its message, or starts an mbox and returns
  // nothing (the mbox then gives its messages).
  std::optional<Message> OpenFile(const std::filesystem::path& path);
  // The next file of the current directory walk, or nothing when the walk is done.
  std::optional<std::filesystem::path> NextFileInWalk();

  std::vector<std::filesystem::path> paths_;
  const std::size_t max_message_bytes_;
  std::size_t next_path_ = 0;
  std::optional<std::filesystem::recursive_directory_iterator> walk_;
  std::unique_ptr<std::ifstream> mbox_file_;
  std::unique_ptr<MboxReader> mbox_;
  std::string mbox_path_;
};

// True when `directory` is a Maildir: it has cur/ and new/ subdirectories.
[[nodiscard]] bool IsMaildir(const std::filesystem::path& directory);

// The total size in bytes of every file MessageSource would read from `paths` (a stat of each,
// no reads), for the progress display's ETA. Nothing when `stop` is requested before the end.
[[nodiscard]] std::optional<std::uint64_t> TotalInputBytes(
    const std::vector<std::filesystem::path>& paths, std::stop_token stop);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_MESSAGE_SOURCE_H_
