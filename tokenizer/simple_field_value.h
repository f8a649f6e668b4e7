// ParseSimpleFieldValue: a Content-Type or Content-Disposition value of the simple form nearly
// all mail uses, read without GMime's parsers (g_mime_content_type_parse,
// g_mime_content_disposition_parse), giving what they give for it. GMime builds a GObject for
// the value, one for its parameter list and one for each parameter, and tears them down again:
// about a twentieth of reading a multipart message (docs/PERFORMANCE.md, "Eleventh round").
//
// Simple means, after unfolding (plain_message.h's UnfoldedValue):
//   - printable 7-bit bytes, spaces and tabs only;
//   - the type is a token; a Content-Type's is a token, '/', a token, with nothing between;
//   - then any number of ';' and a parameter `name=value`, blanks allowed around the ';' only,
//     the name a token without '*' (no RFC 2231), the value a token or a non-empty quoted string
//     with no '\' and no "=?" (nothing for GMime to decode), each name once (in any case);
//   - at most one ';' after the last parameter, then nothing but blanks.
// Tokens are RFC 2045's: bytes 33..126 but ()<>@,;:\"/[]?=. Anything else is std::nullopt and
// GMime reads it. SimpleFieldValueTest checks the two agree on random values. Plain functions;
// thread-safe.
#ifndef NBSPAMD_TOKENIZER_SIMPLE_FIELD_VALUE_H_
#define NBSPAMD_TOKENIZER_SIMPLE_FIELD_VALUE_H_

#include <optional>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// Views into the value given to the parser, which must outlive them.
struct SimpleFieldValue {
  struct Parameter {
    std::string_view name;   // As written.
    std::string_view value;  // A quoted string without its quotes.
  };
  std::string_view type;     // As written ("Text" stays "Text", as GMime keeps it).
  std::string_view subtype;  // Content-Type only; empty for a disposition.
  std::vector<Parameter> parameters;

  // The value of the parameter `name` (compared ignoring ASCII case, as GMime does), or
  // std::nullopt when there is none.
  [[nodiscard]] std::optional<std::string_view> Find(std::string_view name) const;
};

// `value` read as a Content-Type (`with_subtype`) or a Content-Disposition, when it is simple
// (above); std::nullopt otherwise.
[[nodiscard]] std::optional<SimpleFieldValue> ParseSimpleFieldValue(std::string_view value,
                                                                    bool with_subtype);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_SIMPLE_FIELD_VALUE_H_
