// HtmlElements: what libxml2's HTML parser knows of each element name, for the fast parser that
// re-does its parse (html_fast_parser.h). Internal to the tokenizer.
//
// The names are HTML 4's elements as libxml2 2.9 lists them (html40ElementTable) and the two more
// its table of implied end tags names (listing, xmp). What libxml2 does with them is read from
// libxml2 itself once, when the table is first used: whether an element is empty (htmlTagLookup),
// and which start tag ends which open element (htmlAutoCloseTag, for two different names). What
// its public interface does not give is written here, from its source: which elements a start
// tag of the same name ends, and the priorities by which an end tag may end the elements above
// its own (htmlEndPriority). HtmlFastParserTest compares both with libxml2's parse.
//
// Thread-safe: built once, then read only.
#ifndef NBSPAMD_TOKENIZER_HTML_ELEMENTS_H_
#define NBSPAMD_TOKENIZER_HTML_ELEMENTS_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace nbspamd::tokenizer::html_elements {

// An element known to the table, or kUnknown (any other name: never empty, never ended by a
// start tag, and ending none).
using ElementId = int;
constexpr ElementId kUnknown = -1;

// The ids of the names the fast parser treats specially.
enum : ElementId {
  kHtml,
  kHead,
  kBody,
  kP,
  kScript,
  kStyle,
  kMeta,
  kLink,
  kTitle,
  kBase,
  kNoframes,
  kFrame,
  kFrameset,
  kFirstOther,  // The rest, in the table's order.
};

// Every known name, by id.
[[nodiscard]] std::span<const char* const> AllNames();
// The id of `name` (lower case), or kUnknown.
[[nodiscard]] ElementId IdOf(std::string_view name);
// The NUL-terminated name of a known id.
[[nodiscard]] const char* NameOf(ElementId id);
// Whether the element has no content: the parser ends it as soon as its start tag ends.
[[nodiscard]] bool IsEmpty(ElementId id);
// Whether a start tag of `new_id` ends an open element of `old_id` (htmlCheckAutoClose).
[[nodiscard]] bool StartEnds(ElementId new_id, ElementId old_id);
// The priority of an element for end tags (htmlGetEndPriority): an end tag ends the elements
// above its own only when none has a higher priority than its own.
[[nodiscard]] int EndPriority(ElementId id);

}  // namespace nbspamd::tokenizer::html_elements

#endif  // NBSPAMD_TOKENIZER_HTML_ELEMENTS_H_
