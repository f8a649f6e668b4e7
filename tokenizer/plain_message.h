// SplitPlainMessage: a message whose header block GMime's parser reads field by field exactly as
// written, split into those fields and its body without the parser; SplitMultipartBody: a
// multipart body split into its parts as the parser finds them. The mail reader's shortcut
// (mail_reader.cc) for a message whose parts are leaves and multiparts with such header blocks:
// GMime's parse, its header objects and their teardown are about a third of reading such a
// message (docs/PERFORMANCE.md). Plain functions; thread-safe.
//
// A header block is plain when:
//   - it ends with an empty line (LF or CRLF);
//   - each of its lines is a field, `Name:` with Name one or more bytes 33..126 other than ':'
//     and the colon right after it, or, after the first line, a fold: a space or tab, then at
//     least one byte that is neither;
//   - no byte is a control byte but tabs and line breaks (LF, or CR right before LF): bytes
//     32..126 and 128..255 only. What is left for GMime to decode in a value (encoded words,
//     8-bit text), the reader decodes with GMime's own decoder (mail_reader.cc).
// Anything else (a mbox "From " line, a line that is neither a field nor a fold, a control byte,
// no empty line) is std::nullopt: GMime reads it, as before.
#ifndef NBSPAMD_TOKENIZER_PLAIN_MESSAGE_H_
#define NBSPAMD_TOKENIZER_PLAIN_MESSAGE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// One header field, as GMime 3 keeps it (g_mime_header_get_name, g_mime_header_get_raw_value).
struct PlainField {
  std::string_view name;       // As written.
  std::string_view raw_value;  // From after the colon to the end of the field's last line, its
                               // leading space, folds and final line break included.
};

// Views into the message given to SplitPlainMessage, which must outlive them.
struct PlainMessage {
  // The message's own fields in order: what GMime lists for the message. Fields named
  // "Content-*" (any case) are not among them: GMime gives those to the body part.
  std::vector<PlainField> fields;
  std::vector<PlainField> content_fields;  // The "Content-*" fields, in order.
  std::string_view body;                   // Everything after the empty line.
};

[[nodiscard]] std::optional<PlainMessage> SplitPlainMessage(std::string_view message);

// One part of a multipart body (SplitMultipartBody). Views into the body.
struct MultipartPartBytes {
  std::string_view bytes;  // The part as GMime's parser gives it: its header block and content.
  // The same bytes followed by the line break left out of them, as written: what a multipart
  // within sees, as its last line is read as written.
  std::string_view written;
};

// The parts of a multipart body whose boundary parameter is `boundary`, as GMime's parser finds
// them: each from after a boundary line ("--" boundary, then only spaces, tabs or CRs) to the
// line break before the next boundary line, left out. That line break is taken to be as long as
// the boundary line's own: two bytes when the boundary line ends with CR LF (so a part whose
// last line ends with a bare LF loses its last byte, as with GMime), else one. The last part
// ends at the closing line ("--" boundary "--", the same trailing blanks allowed). The bytes
// before the first boundary line (the prologue) and after the closing one (the epilogue) are in
// no part. Each part is then a header block and a content, as a message is (SplitPlainMessage).
// std::nullopt where GMime's reading is not reproduced here: an empty boundary, no boundary
// line, no closing line, a boundary line after the closing one, or a line that starts with "--"
// boundary and is neither kind of boundary line.
[[nodiscard]] std::optional<std::vector<MultipartPartBytes>> SplitMultipartBody(
    std::string_view body, std::string_view boundary);

// A raw value as g_mime_utils_header_unfold gives it: spaces, tabs and line breaks trimmed at
// both ends, every CR and LF inside removed (the folds' spaces stay). For a plain header block's
// values of 7-bit text with no "=?" this is also GMime's decoded value (g_mime_header_get_value).
[[nodiscard]] std::string UnfoldedValue(std::string_view raw_value);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_PLAIN_MESSAGE_H_
