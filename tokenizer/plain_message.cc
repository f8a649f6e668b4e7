#include "tokenizer/plain_message.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

bool IsFieldNameByte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 33 && byte <= 126 && c != ':';
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool IsLinearWhiteSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Whether one of the 8 bytes of `word` may be a byte a plain line may not hold: a byte below 32
// (the tab too, which the byte check then lets through) or 127. Exact the other way: false means
// none is (only such bytes borrow in the subtractions, so the first of them is always flagged).
bool MayHoldStopByte(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kHighs = 0x8080808080808080;
  const std::uint64_t below_space = (word - 32 * kOnes) & ~word & kHighs;
  const std::uint64_t del = word ^ (0x7F * kOnes);
  const std::uint64_t is_del = (del - kOnes) & ~del & kHighs;
  return (below_space | is_del) != 0;
}

// True when `line` (without its line break) holds no control byte but tabs: bytes 32..126, tabs,
// and bytes of 128 and above. Eight bytes at a time: a word with no byte to look at is passed
// over whole.
bool IsPlainLine(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (line.size() - i >= 8) {
      std::uint64_t word;
      std::memcpy(&word, line.data() + i, 8);
      if (!MayHoldStopByte(word)) {
        i += 8;
        continue;
      }
    }
    const std::size_t end = std::min(line.size(), i + 8);
    for (; i < end; ++i) {
      const auto byte = static_cast<unsigned char>(line[i]);
      if ((byte < 32 && byte != '\t') || byte == 127) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<PlainMessage> SplitPlainMessage(std::string_view message) {
  PlainMessage plain;
  std::size_t start = 0;
  // The field being read: where its name starts and how long the name is (its value follows the
  // colon after it).
  std::size_t field_start = std::string_view::npos;
  std::size_t name_size = 0;
  const auto close_field = [&](std::size_t end) {
    if (field_start == std::string_view::npos) return;
    const std::string_view name = message.substr(field_start, name_size);
    const PlainField field{
        name, message.substr(field_start + name_size + 1, end - (field_start + name_size + 1))};
    if (name.size() >= 8 && EqualsIgnoringAsciiCase(name.substr(0, 8), "content-")) {
      plain.content_fields.push_back(field);
    } else {
      plain.fields.push_back(field);
    }
  };
  while (true) {
    const std::size_t newline = message.find('\n', start);
    if (newline == std::string_view::npos) return std::nullopt;  // No empty line.
    std::string_view line = message.substr(start, newline - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {  // The empty line ending the header block.
      close_field(start);
      plain.body = message.substr(newline + 1);
      return plain;
    }
    if (!IsPlainLine(line)) return std::nullopt;
    if (IsBlank(line.front())) {
      if (field_start == std::string_view::npos) return std::nullopt;  // A fold first.
      if (line.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;
    } else {
      std::size_t name_end = 0;
      while (name_end < line.size() && IsFieldNameByte(line[name_end])) ++name_end;
      if (name_end == 0 || name_end == line.size() || line[name_end] != ':') return std::nullopt;
      close_field(start);
      field_start = start;
      name_size = name_end;
    }
    start = newline + 1;
  }
}

std::optional<std::vector<MultipartPartBytes>> SplitMultipartBody(std::string_view body,
                                                                  std::string_view boundary) {
  if (boundary.empty()) return std::nullopt;
  std::vector<MultipartPartBytes> parts;
  std::size_t part_start = std::string_view::npos;  // After the latest boundary line.
  bool closed = false;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t newline = body.find('\n', start);
    if (newline == std::string_view::npos) newline = body.size();
    const std::string_view line = body.substr(start, newline - start);
    if (line.size() >= 2 + boundary.size() && line.starts_with("--") &&
        line.substr(2, boundary.size()) == boundary) {
      std::string_view rest = line.substr(2 + boundary.size());
      const bool closing = rest.starts_with("--");
      if (closing) rest.remove_prefix(2);
      if (rest.find_first_not_of(" \t\r") != std::string_view::npos) return std::nullopt;
      if (closed) return std::nullopt;
      if (part_start != std::string_view::npos) {
        // The part ends before the line break that ends the line before this one, taken to be
        // as long as this line's own: CR LF when this line ends with a CR (whatever the byte
        // before that LF is), else LF.
        const std::size_t line_break = line.ends_with('\r') ? 2 : 1;
        if (start < part_start + line_break) return std::nullopt;
        parts.push_back({.bytes = body.substr(part_start, start - line_break - part_start),
                         .written = body.substr(part_start, start - part_start)});
      }
      closed = closing;
      part_start = newline + 1;
    }
    start = newline + 1;
  }
  if (!closed || parts.empty()) return std::nullopt;
  return parts;
}

std::string UnfoldedValue(std::string_view raw_value) {
  std::size_t begin = 0;
  std::size_t end = raw_value.size();
  while (begin < end && IsLinearWhiteSpace(raw_value[begin])) ++begin;
  while (end > begin && IsLinearWhiteSpace(raw_value[end - 1])) --end;
  const std::string_view inner = raw_value.substr(begin, end - begin);
  // Most values are one line: two memchr calls tell.
  if (inner.find('\n') == std::string_view::npos && inner.find('\r') == std::string_view::npos) {
    return std::string(inner);
  }
  // Every byte but CR and LF, without a branch per byte (find_first_of("\r\n") called memchr
  // once a byte).
  std::string value(end - begin, '\0');
  char* out = value.data();
  for (std::size_t i = begin; i < end; ++i) {
    const char c = raw_value[i];
    *out = c;
    out += static_cast<std::size_t>(c != '\r' && c != '\n');
  }
  value.resize(static_cast<std::size_t>(out - value.data()));
  return value;
}

}  // namespace nbspamd::tokenizer
