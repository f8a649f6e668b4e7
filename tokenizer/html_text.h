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
  std::string text;                // Visible text, UTF-8; block elements separated by spaces.
  std::vector<std::string> links;  // href and src values, as written.
  std::size_t images = 0;          // <img> elements.
  bool truncated = false;          // Whether the input was cut at max_tags (below).
};

// Parses `html` (UTF-8) up to its (max_tags + 1)-th '<', which bounds the elements libxml2
// builds (a few hundred bytes each). Never fails: markup it cannot make sense of gives less text.
[[nodiscard]] HtmlContent VisibleText(std::string_view html, std::size_t max_tags = 50000);

// Prepares libxml2 for use from many threads; called once before the first VisibleText.
void InitializeHtmlParser();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HTML_TEXT_H_
