// ParseHtmlFast: libxml2's HTML parse re-done for the hot path. It gives an HtmlTextCollector
// the events libxml2 2.9's htmlParseDocument gives its SAX handler for the same input (with
// html_parse::kParseOptions, the input already UTF-8, as html_text.cc runs it), so VisibleText
// is the same whichever parser ran; it reads each byte once where libxml2 decodes each
// character, copies names into a dictionary and looks elements up by comparing strings.
//
// It re-does the parse as libxml2's source does it: the stack of open names; the end tags a start
// tag implies (html_elements.h) and the html, head, body and p elements it implies; the misplaced
// html, head and body tags it drops; end tags that end the elements above their own by
// priority, or are dropped; text cut into chunks of 1,000 bytes, a last chunk of blanks implying
// no p where libxml2 takes it for ignorable blanks; characters that are not XML characters dropped
// from text; entity and character references as libxml2 reads them in text and in attribute values;
// a script's or style's content up to the end tag of its name; comments, processing instructions
// and doctypes, also unterminated ones.
//
// It leaves to libxml2 (returns false, having given the collector some events: the caller starts
// again with a fresh one) what it does not re-do: input that is not strict UTF-8 or holds a NUL
// byte (libxml2 switches encodings or reads a blank), a byte order mark, a name of 100 bytes or
// more (libxml2 cuts it), a name that libxml2 would read as non-ASCII, a quoted attribute value
// without its closing quote, elements nested deeper than HtmlTextCollector::kMaxDepth allows, and
// a script or style element that is not the innermost open element.
//
// Thread-safe (no state but the read-only tables); throws nothing but std::bad_alloc.
#ifndef NBSPAMD_TOKENIZER_HTML_FAST_PARSER_H_
#define NBSPAMD_TOKENIZER_HTML_FAST_PARSER_H_

#include <string_view>

#include "tokenizer/html_text_collector.h"

namespace nbspamd::tokenizer {

[[nodiscard]] bool ParseHtmlFast(std::string_view html, HtmlTextCollector& collector);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HTML_FAST_PARSER_H_
