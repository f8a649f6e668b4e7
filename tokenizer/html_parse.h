// What the two readings of libxml2's HTML parse share (html_text.cc reads its SAX events,
// html_tree_text.cc walks its tree): which elements matter, the budget cut made before parsing,
// and the parse itself. Internal to the tokenizer; thread-safe (no state but libxml2's
// per-thread error handler).
#ifndef NBSPAMD_TOKENIZER_HTML_PARSE_H_
#define NBSPAMD_TOKENIZER_HTML_PARSE_H_

#include <libxml/HTMLparser.h>

#include <string_view>

#include "tokenizer/html_text.h"

namespace nbspamd::tokenizer::html_parse {

// What a reader does with an element, by its name (ASCII case ignored).
enum ElementFlags : unsigned {
  kSkipped = 1,   // script, style, noscript: nothing inside is seen.
  kBlock = 2,     // A reader sees a break before and after it, so words stay apart.
  kHrefLink = 4,  // a, area, link: the href is a link.
  kImage = 8,     // img: counted, its src is a link.
  kAltText = 16,  // img, area: the alt text is seen.
};

// The ElementFlags of an element named `raw_name` (null: none).
[[nodiscard]] unsigned FlagsOf(const xmlChar* raw_name);

// `html` cut at the first '<' where a budget of `limits` is exceeded (html_text.h says how they
// are counted); sets `truncated` when it was cut.
[[nodiscard]] std::string_view WithinBudget(std::string_view html, const HtmlLimits& limits,
                                            bool& truncated);

// Not HTML_PARSE_NOIMPLIED: without the implied <html><body>, libxml2 drops whitespace-only text
// outside any element, gluing the words of "<a>BUY</a> <a>NOW</a>" into "BUYNOW".
constexpr int kParseOptions = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                              HTML_PARSE_NONET | HTML_PARSE_COMPACT;

// `html`'s size as libxml2's int, clamped.
[[nodiscard]] int ClampedSize(std::string_view html);

// Keeps libxml2's error handler (one per thread) from writing to standard error.
void SilenceErrors();

}  // namespace nbspamd::tokenizer::html_parse

#endif  // NBSPAMD_TOKENIZER_HTML_PARSE_H_
