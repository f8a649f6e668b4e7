// The reference reading of an HTML part that VisibleText (html_text.h) must equal, field for
// field: the same parse built into libxml2's tree and walked in document order. Slower (a node for
// every tag, text and attribute, then freed); kept for the differential tests, the word_paths fuzz
// target, MailReader's HtmlPath::kTree and bench/tokenizer_paths_check. Thread-safe; throws
// nothing but std::bad_alloc.
#ifndef NBSPAMD_TOKENIZER_HTML_TREE_TEXT_H_
#define NBSPAMD_TOKENIZER_HTML_TREE_TEXT_H_

#include <cstddef>
#include <string_view>

#include "tokenizer/html_text.h"

namespace nbspamd::tokenizer {

[[nodiscard]] HtmlContent VisibleTextFromTree(std::string_view html, const HtmlLimits& limits = {});

// For tests: the attributes of all elements of the tree libxml2 builds from `html` within
// `limits`, the number the budgets bound.
[[nodiscard]] std::size_t CountParsedAttributes(std::string_view html, const HtmlLimits& limits);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HTML_TREE_TEXT_H_
