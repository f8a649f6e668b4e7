// MboxReader: splits an mbox stream into its messages, one at a time, holding at most one
// message in memory, so an mbox of gigabytes is read in bounded memory.
//
//   std::ifstream file(path, std::ios::binary);
//   MboxReader reader(file, 64 << 20);
//   while (auto message = reader.Next()) Send(message->body);
//
// A message starts at each line that begins with "From " (the first line of the stream is one);
// that separator line is dropped. mboxrd quoting is undone: a line ">From ", ">>From " … loses
// one '>'. The blank line that the mbox format puts before each separator is dropped too.
// Lines keep their endings (LF or CRLF); a last message without a final newline is kept as is.
// Not thread-safe.
#ifndef NBSPAMD_CLIENT_MBOX_READER_H_
#define NBSPAMD_CLIENT_MBOX_READER_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

namespace nbspamd::client {

// One message of an mbox.
struct MboxMessage {
  std::size_t number = 0;      // 1 for the first message of the stream.
  std::string body;            // Empty when too_large.
  std::uint64_t size = 0;      // Bytes of the message as sent (also when too_large).
  std::uint64_t consumed = 0;  // Bytes of the stream this message took, separator included.
  bool too_large = false;      // Its size exceeded max_message_bytes; the body was dropped.
};

class MboxReader {
 public:
  // REQUIRES: `in` outlives the reader and is positioned at the start of the mbox.
  MboxReader(std::istream& in, std::size_t max_message_bytes);

  // The next message, or nothing at the end of the stream.
  [[nodiscard]] std::optional<MboxMessage> Next();

 private:
  std::istream& in_;
  const std::size_t max_message_bytes_;
  std::size_t number_ = 0;
  bool separator_read_ = false;  // The next message's "From " line was read already.
  std::string line_;
};

// True when `first_line` marks an mbox: it starts with "From ".
[[nodiscard]] bool IsMboxSeparator(std::string_view line);

// Removes one '>' from a line of the form ">From ", ">>From " …; other lines are unchanged.
void UnquoteFromLine(std::string& line);

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_MBOX_READER_H_
