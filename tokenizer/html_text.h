// VisibleText: what a reader sees of an HTML part, and where its links point. libxml2's HTML
// parser does the parsing (it recovers from the broken markup spam is full of and decodes
// entities); scripts, styles and comments are dropped.
#ifndef NBSPAMD_TOKENIZER_HTML_TEXT_H_
#define NBSPAMD_TOKENIZER_HTML_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

struct HtmlContent {
  friend bool operator==(const HtmlContent&, const HtmlContent&) = default;

  std::string text;                // Visible text, UTF-8; block elements separated by spaces.
  std::vector<std::string> links;  // href and src values, as written.
  std::size_t images = 0;          // <img> elements.
  bool truncated = false;          // Whether the input was cut by an HtmlLimits budget.
};

// Budgets on libxml2's work: time quadratic in the attributes of one tag, and memory for what it
// builds (the reference's tree costs tens to hundreds of bytes for each tag and attribute; the
// event reader's only an attribute list per tag and a stack entry per open element). Before
// parsing, a scan finds the start tags and their attributes as libxml2 reads them (erring towards
// more), and the input is cut at the first '<' where one budget is exceeded:
//   - max_tags: each '<' counts, whatever follows it;
//   - max_attributes: the attributes of all start tags together;
//   - max_tag_attributes: the attributes of one start tag.
// The scan reads at most max_scan_factor times the input's bytes (a quoted attribute value that
// holds more tags is read once for each), and cuts where it stops.
struct HtmlLimits {
  std::size_t max_tags = 50000;
  std::size_t max_attributes = 50000;
  std::size_t max_tag_attributes = 1000;
  std::size_t max_scan_factor = 4;
};

// Which parser reads the HTML; both give the same HtmlContent (html_tree_text.h has the reference
// they are compared with).
enum class HtmlParser {
  kFast,     // html_fast_parser.h, which hands what it does not re-do to libxml2.
  kLibxml2,  // libxml2's own parse, read as SAX events.
};

// Parses `html` (UTF-8) within `limits`. Never fails: markup it cannot make sense of gives less
// text. Reads libxml2's parse (or the fast parser's re-doing of it) as events, without building
// a tree (html_tree_text.h has the reference that builds it). Thread-safe: each call has its own
// parser; throws nothing but std::bad_alloc.
[[nodiscard]] HtmlContent VisibleText(std::string_view html, const HtmlLimits& limits = {},
                                      HtmlParser parser = HtmlParser::kFast);

// For tests: the events `parser` gives for `html` (HtmlTextCollector::TraceInto says how they
// are written), and whether the fast parser read it all itself (`fast_parsed`, when not null).
[[nodiscard]] std::string HtmlEventTrace(std::string_view html, HtmlParser parser,
                                         bool* fast_parsed = nullptr);

// Prepares libxml2 for use from many threads; called once before the first VisibleText.
void InitializeHtmlParser();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HTML_TEXT_H_
