#include "tokenizer/mail_budgets.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

// Whether `line` (without its line break) starts a header field: `Name:` with a printable name.
bool IsFieldLine(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  return std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon),
                     [](char c) { return c > 32 && c < 127; });
}

// Whether `line` starts a field as GMime's parser also reads one: a name, then blanks, then the
// colon ("To :").
bool IsLooseFieldLine(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  std::size_t name_end = colon;
  while (name_end > 0 && (line[name_end - 1] == ' ' || line[name_end - 1] == '\t')) --name_end;
  return name_end > 0 &&
         std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(name_end),
                     [](char c) { return c > 32 && c < 127; });
}

// Whether `text` contains `lower` (lower-case) ignoring ASCII case.
bool ContainsNoCase(std::string_view text, std::string_view lower) {
  return std::search(text.begin(), text.end(), lower.begin(), lower.end(),
                     [](char a, char b) { return AsciiLower(a) == b; }) != text.end();
}

// Whether the field `line` starts is Content-Type.
bool IsContentType(std::string_view line) {
  constexpr std::string_view kName = "content-type";
  const std::string_view name = line.substr(0, line.find(':'));
  return name.size() >= kName.size() && ContainsNoCase(name.substr(0, kName.size()), kName) &&
         name.find_first_not_of(" \t", kName.size()) == std::string_view::npos;
}

// Whether the field `line` starts is one GMime parses as addresses when it builds a message:
// From, Sender, Reply-To, To, Cc, Bcc.
bool IsAddressField(std::string_view line) {
  // The name ends at the first colon, space or tab; none of the names is longer than kLongest, so
  // no more of the line is looked at (most lines that reach here are a body's).
  constexpr std::size_t kLongest = 8;  // "reply-to".
  std::size_t end = 0;
  while (end < line.size() && end <= kLongest && line[end] != ':' && line[end] != ' ' &&
         line[end] != '\t') {
    ++end;
  }
  if (end > kLongest) return false;
  const std::string_view name = line.substr(0, end);
  for (std::string_view field : {"from", "sender", "reply-to", "to", "cc", "bcc"}) {
    if (name.size() == field.size() && ContainsNoCase(name, field)) return true;
  }
  return false;
}

// Whether `line` can start an address field at all: the names IsAddressField takes start with
// one of these letters. Most lines of a message (its body's) are passed over here, before any
// search for a colon.
bool MayStartAddressField(std::string_view line) {
  if (line.empty()) return false;
  switch (AsciiLower(line.front())) {
    case 'f':
    case 's':
    case 'r':
    case 't':
    case 'c':
    case 'b':
      return true;
    default:
      return false;
  }
}

// At least as many comments (RFC 5322 3.2.2) as GMime leaves open at the end of an address
// field, read line by line, however it reads the quoted strings and domain literals around them:
// every '(' may open one, and only a ')' that no backslash quotes may close one.
class OpenComments {
 public:
  void Read(std::string_view text) {
    ends_in_backslash_ = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\\') {
        if (++i == text.size()) {
          ends_in_backslash_ = true;
        } else if (text[i] == '(') {
          ++depth_;  // Quoted in a comment or a string, but not in a domain literal.
        }
      } else if (c == '(') {
        ++depth_;
      } else if (c == ')' && depth_ > 0) {
        --depth_;
      }
    }
  }
  // What closes them: a ')' for each, after a space if a backslash would quote the first.
  std::string Closing() const {
    if (depth_ == 0) return {};
    std::string closing(ends_in_backslash_ ? 1 : 0, ' ');
    closing.append(depth_, ')');
    return closing;
  }
  void Reset() { *this = OpenComments(); }

 private:
  std::size_t depth_ = 0;
  bool ends_in_backslash_ = false;
};

}  // namespace

std::size_t MultipartCut(std::string_view message, std::size_t limit) {
  // Every "multipart/" holds its '/' nine bytes in, after a 't'. The candidates, each '/' after
  // a 't' or 'T', are found 16 bytes at a time where the CPU can (SSE2; mail has far fewer of them
  // than of '/', which HTML's end tags and URLs are full of), and the nine bytes before each are
  // compared. The matches come in the same order as a byte-by-byte search for "multipart/" finds
  // them, and cannot overlap.
  constexpr std::string_view kWord = "multipart";
  std::size_t seen = 0;
  // The cut when the '/' at `slash` ends the (limit + 1)-th "multipart/", else npos.
  const auto cut_at = [&](std::size_t slash) {
    const std::size_t start = slash - kWord.size();
    if (!EqualsIgnoringAsciiCase(message.substr(start, kWord.size()), kWord) || ++seen <= limit) {
      return std::string_view::npos;
    }
    const std::size_t line = message.rfind('\n', start);
    return line == std::string_view::npos ? 0 : line + 1;
  };
  std::size_t slash = kWord.size();
#if defined(__SSE2__)
  const __m128i slash_byte = _mm_set1_epi8('/');
  const __m128i t_byte = _mm_set1_epi8('t');
  const __m128i case_bit = _mm_set1_epi8(0x20);  // 'T' | 0x20 is 't', and no other byte's is.
  for (; slash + 16 <= message.size(); slash += 16) {
    const char* const here = message.data() + slash;
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(here));
    const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(here - 1));
    unsigned mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(bytes, slash_byte),
                                        _mm_cmpeq_epi8(_mm_or_si128(before, case_bit), t_byte))));
    for (; mask != 0; mask &= mask - 1) {
      const std::size_t cut = cut_at(slash + static_cast<std::size_t>(__builtin_ctz(mask)));
      if (cut != std::string_view::npos) return cut;
    }
  }
#endif
  for (; slash < message.size(); ++slash) {
    if (message[slash] != '/') continue;
    const std::size_t cut = cut_at(slash);
    if (cut != std::string_view::npos) return cut;
  }
  return std::string_view::npos;
}

Budgeted ApplyBudgets(std::string_view message, const MailReaderOptions& options,
                      std::string& storage) {
  // kBlockStart: the line after a boundary line or after the header block of an attached
  // message (or of a digest's part: its parts are messages unless they say otherwise); it
  // starts a header block if it is a field.
  enum class State { kHeader, kBlockStart, kBody };
  State state = State::kHeader;
  Budgeted result;
  bool copying = false;            // Once a line is dropped, kept lines go to `storage`.
  bool dropping = false;           // The rest of the current header block is dropped.
  bool in_content_type = false;    // The current header field is Content-Type.
  bool block_has_message = false;  // The current header block declares a message/ type.
  bool multipart_seen = false;     // A header block declared a multipart/ type.
  bool digest_seen = false;        // A header block declared multipart/digest.
  bool part_block = false;         // The current header block follows a boundary line.
  bool block_has_type = false;     // The current header block has a Content-Type field.
  std::size_t fields = 0;
  std::size_t header_bytes = 0;
  std::size_t boundaries = 0;
  std::size_t pos = 0;
  bool in_address = false;     // The current field (or body line) reads as an address field.
  OpenComments open_comments;  // Of the current address field.
  // Ends the current field: closes its open comments before the last line break kept.
  auto end_field = [&] {
    if (const std::string closing = open_comments.Closing(); !closing.empty()) {
      if (!copying) storage.assign(message.substr(0, pos));
      copying = true;
      std::size_t end = storage.size();
      while (end > 0 && (storage[end - 1] == '\n' || storage[end - 1] == '\r')) --end;
      storage.insert(end, closing);
    }
    open_comments.Reset();
    in_address = false;
  };
  while (pos < message.size()) {
    const std::size_t newline = message.find('\n', pos);
    const std::size_t next = newline == std::string_view::npos ? message.size() : newline + 1;
    const std::string_view line = message.substr(pos, next - pos);
    std::string_view content = line;
    while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) {
      content.remove_suffix(1);
    }
    if (state == State::kBlockStart) {
      if (IsFieldLine(content)) {
        state = State::kHeader;
      } else if (content.empty() && part_block && digest_seen) {
        part_block = false;  // A digest's part without fields: its message follows.
      } else {
        state = State::kBody;
      }
    }
    bool keep = true;
    std::string_view head;  // When !keep, the start of the line kept (then a line break).
    if (state == State::kHeader) {
      if (content.empty()) {
        const bool digest_message = part_block && digest_seen && !block_has_type;
        state = block_has_message || digest_message ? State::kBlockStart : State::kBody;
        block_has_message = false;
        block_has_type = false;
        part_block = false;
        dropping = false;
      } else {
        const bool new_field = content.front() != ' ' && content.front() != '\t';
        const bool too_many = new_field && fields >= options.max_header_fields;
        if (dropping || too_many || header_bytes + line.size() > options.max_header_bytes) {
          if (!dropping && !too_many) {
            // The line that crosses the byte budget: its start, up to the budget.
            head = content.substr(0, options.max_header_bytes - header_bytes);
            header_bytes = options.max_header_bytes;
            fields += new_field ? 1 : 0;
          }
          dropping = true;
          keep = false;
        } else {
          fields += new_field ? 1 : 0;
          header_bytes += line.size();
          if (new_field) in_content_type = IsContentType(content);
          // Loosely: GMime also reads "multipart (comment) / mixed" and folded types.
          if (in_content_type && ContainsNoCase(content, "multipart")) multipart_seen = true;
          if (in_content_type && ContainsNoCase(content, "digest")) digest_seen = true;
          if (in_content_type) block_has_type = true;
          if (in_content_type && ContainsNoCase(content, "message")) block_has_message = true;
        }
      }
    } else if (multipart_seen && content.starts_with("--")) {
      if (++boundaries > options.max_boundary_lines) {
        result.parts_cut = true;
        break;
      }
      state = State::kBlockStart;
      part_block = true;
    }
    // Address fields wherever GMime may find one: the scan's idea of where a header block ends
    // is looser than GMime's, and a line that reads as an address field in a body changes no
    // word. GMime reads a field as a C string: a NUL would hide the rest of it and the comments
    // closed there, so NULs in address fields become spaces.
    const std::string_view kept = keep ? content : head;
    if (keep || !head.empty()) {
      const bool continuation = !kept.empty() && (kept.front() == ' ' || kept.front() == '\t');
      if (!continuation) {
        end_field();
        // The cheap tests first: the name before the search for the colon.
        in_address = MayStartAddressField(kept) && IsAddressField(kept) && IsLooseFieldLine(kept);
      }
      if (in_address) open_comments.Read(kept.substr(continuation ? 0 : kept.find(':') + 1));
    }
    const bool nul_in_address = in_address && kept.find('\0') != std::string_view::npos;
    if (!keep || nul_in_address) {
      if (!copying) storage.assign(message.substr(0, pos));
      copying = true;
      if (!keep) result.headers_cut = true;
    }
    const std::size_t appended = storage.size();
    if (keep && copying) storage.append(line);
    if (!head.empty()) storage.append(head).append("\n");
    if (nul_in_address) {
      std::replace(storage.begin() + static_cast<std::ptrdiff_t>(appended), storage.end(), '\0',
                   ' ');
    }
    pos = next;
  }
  end_field();
  result.text = copying ? std::string_view(storage) : message.substr(0, pos);
  return result;
}

}  // namespace nbspamd::tokenizer
