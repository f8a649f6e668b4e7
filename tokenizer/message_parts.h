// SplitMessage: a minimal RFC 5322 split of a message into header fields and body.
//
// This is deliberately small: no MIME, no RFC 2047 decoding, no charset handling (a later change
// replaces it with GMime). It only decides whether the input looks like a mail message and, if so,
// where the header block ends.
//
// Detection rule: the input is mail when its FIRST line is a header field, that is
// `Name: value` where Name is one or more printable ASCII characters (33..126) other than ':'
// and is immediately followed by ':' (but not by "://": a line starting with a URL is text).
// Consequently a plain-text body whose first line happens to read like "Hello: world" or "Note:
// call me" is treated as mail, and that first line becomes a header (whose words are not body
// tokens). This is intended: it is how a mail parser sees it.
//
// Header block: lines (ended by LF or CRLF) up to the first empty line; the body is everything
// after that empty line. Lines starting with space or tab continue the previous field (they are
// unfolded). Being lenient, a line inside the header block that is neither a field nor a
// continuation ends the header block and starts the body (it is kept in the body). A message that
// is all headers with no empty line has an empty body.
#ifndef NBSPAMD_TOKENIZER_MESSAGE_PARTS_H_
#define NBSPAMD_TOKENIZER_MESSAGE_PARTS_H_

#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// One header field.
struct HeaderField {
  std::string name;   // As written, case preserved; compare with HeaderNameEquals.
  std::string value;  // Text after ':', unfolded (line breaks before continuation lines removed,
                      // the continuation's leading space/tab kept), with leading and trailing
                      // spaces/tabs trimmed. Raw bytes: encoded words are not decoded.
};

// A message split into headers and body.
struct MessageParts {
  std::vector<HeaderField> headers;  // In message order; empty when !is_mail.
  std::string_view body;             // Points into the input of SplitMessage: it must outlive
                                     // this. The whole input when !is_mail.
  bool is_mail = false;              // Whether the input looked like an RFC 5322 message.
};

// Splits `message` per the rules at the top of this file. Never fails: anything that does not
// look like mail is all body. Without `with_headers`, `headers` stays empty (nothing is copied)
// and `is_mail` and `body` are as with them.
[[nodiscard]] MessageParts SplitMessage(std::string_view message, bool with_headers = true);

// ASCII case-insensitive comparison of header names ("Subject" == "SUBJECT").
[[nodiscard]] bool HeaderNameEquals(std::string_view a, std::string_view b);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_MESSAGE_PARTS_H_
