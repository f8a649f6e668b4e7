#include "tokenizer/message_parts.h"

#include <cstddef>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

// One line of the input: its content without the line break, and where the next line starts.
struct Line {
  std::string_view content;
  std::size_t next = 0;  // Offset of the next line; the input size at the end.
};

Line LineAt(std::string_view text, std::size_t start) {
  const std::size_t newline = text.find('\n', start);
  const std::size_t end = newline == std::string_view::npos ? text.size() : newline;
  std::string_view content = text.substr(start, end - start);
  if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
  return Line{content, newline == std::string_view::npos ? text.size() : newline + 1};
}

bool IsFieldNameChar(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 33 && byte <= 126 && c != ':';
}

// The length of the field name when `line` is `Name:...`, else 0. "scheme://..." is a URL, not
// a field.
std::size_t FieldNameLength(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && IsFieldNameChar(line[i])) ++i;
  if (i == 0 || i >= line.size() || line[i] != ':') return 0;
  if (line.substr(i + 1).starts_with("//")) return 0;
  return i;
}

bool IsWsp(char c) { return c == ' ' || c == '\t'; }

void TrimWsp(std::string& value) {
  std::size_t end = value.size();
  while (end > 0 && IsWsp(value[end - 1])) --end;
  std::size_t begin = 0;
  while (begin < end && IsWsp(value[begin])) ++begin;
  value.erase(end);
  value.erase(0, begin);
}

}  // namespace

MessageParts SplitMessage(std::string_view message, bool with_headers) {
  MessageParts parts;
  if (FieldNameLength(LineAt(message, 0).content) == 0) {
    parts.body = message;
    return parts;
  }
  parts.is_mail = true;
  bool in_field = false;  // A field has been read: a line starting with a space continues it.
  std::size_t start = 0;
  while (start < message.size()) {
    const Line line = LineAt(message, start);
    if (line.content.empty()) {  // The empty line ending the header block.
      parts.body = message.substr(line.next);
      break;
    }
    if (IsWsp(line.content.front()) && in_field) {
      if (with_headers) parts.headers.back().value.append(line.content);  // Unfold.
    } else if (const std::size_t name_length = FieldNameLength(line.content); name_length > 0) {
      in_field = true;
      if (with_headers) {
        parts.headers.push_back(HeaderField{std::string(line.content.substr(0, name_length)),
                                            std::string(line.content.substr(name_length + 1))});
      }
    } else {  // Not a header line: the header block ended without an empty line.
      parts.body = message.substr(start);
      break;
    }
    start = line.next;
  }
  for (HeaderField& field : parts.headers) TrimWsp(field.value);
  return parts;
}

bool HeaderNameEquals(std::string_view a, std::string_view b) {
  return EqualsIgnoringAsciiCase(a, b);
}

}  // namespace nbspamd::tokenizer
