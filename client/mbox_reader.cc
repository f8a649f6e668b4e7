#include "client/mbox_reader.h"

namespace nbspamd::client {
namespace {

// Drops the blank line the mbox format writes after each message ("\n\n" or "\r\n\r\n" at the
// end of the body becomes one line ending).
void DropSeparatorBlankLine(std::string& body) {
  if (body.ends_with("\r\n\r\n")) {
    body.resize(body.size() - 2);
  } else if (body.ends_with("\n\n")) {
    body.pop_back();
  }
}

}  // namespace

bool IsMboxSeparator(std::string_view line) { return line.starts_with("From "); }

void UnquoteFromLine(std::string& line) {
  const std::size_t first = line.find_first_not_of('>');
  if (first == 0 || first == std::string::npos) return;
  if (std::string_view(line).substr(first).starts_with("From ")) line.erase(0, 1);
}

MboxReader::MboxReader(std::istream& in, std::size_t max_message_bytes)
    : in_(in), max_message_bytes_(max_message_bytes) {}

std::optional<MboxMessage> MboxReader::Next() {
  MboxMessage message;
  if (!separator_read_) {
    // The first separator: skip it (and anything before it, which an mbox does not have).
    while (true) {
      if (!std::getline(in_, line_)) return std::nullopt;
      message.consumed += line_.size() + (in_.eof() ? 0 : 1);
      if (IsMboxSeparator(line_)) break;
    }
  } else if (!in_) {
    return std::nullopt;
  }
  separator_read_ = false;
  message.number = ++number_;
  while (std::getline(in_, line_)) {
    const bool has_newline = !in_.eof();
    const std::uint64_t raw = line_.size() + (has_newline ? 1 : 0);
    message.consumed += raw;
    if (IsMboxSeparator(line_)) {
      separator_read_ = true;
      break;
    }
    UnquoteFromLine(line_);
    if (has_newline) line_ += '\n';
    message.size += line_.size();
    if (message.size > max_message_bytes_) {
      message.too_large = true;
      message.body.clear();
      message.body.shrink_to_fit();
    }
    if (!message.too_large) message.body += line_;
  }
  if (!message.too_large) {
    DropSeparatorBlankLine(message.body);
    message.size = message.body.size();
  }
  return message;
}

}  // namespace nbspamd::client
