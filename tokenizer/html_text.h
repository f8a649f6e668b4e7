// VisibleText: what a reader sees of an HTML part, and where its links point. libxml2's HTML
// parser does the parsing (it recovers from the broken markup spam is full of and decodes
// entities); scripts, styles and comments are dropped.
#ifndef NBSPAMD_TOKENIZER_HTML_TEXT_H_
#define NBSPAMD_TOKENIZER_HTML_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

struct HtmlContent {
  std::string text;                // Visible text, UTF-8; block elements separated by spaces.
  std::vector<std::string> links;  // href and src values, as written.
  std::size_t images = 0;          // <img> elements.
};

// Parses `html` (UTF-8). Never fails: markup it cannot make sense of gives less text.
[[nodiscard]] HtmlContent VisibleText(std::string_view html);

// Prepares libxml2 for use from many threads; called once before the first VisibleText.
void InitializeHtmlParser();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HTML_TEXT_H_
