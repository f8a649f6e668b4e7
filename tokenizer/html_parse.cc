#include "tokenizer/html_parse.h"

#include <libxml/parser.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer::html_parse {
namespace {

// libxml2 reports through a global handler; the parse options already silence it, this makes
// sure nothing reaches standard error.
void IgnoreError(void*, const char*, ...) {}

// The blanks of libxml2 (IS_BLANK_CH).
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// What starts and continues a tag or attribute name: libxml2's htmlParseHTMLName reads
// [A-Za-z_:.][A-Za-z0-9_:.-]*. Exactly these: a character read as bogus here but as a name there
// (or the reverse) would change where a quoted value starts, and what is counted after it.
bool IsNameStart(char c) { return IsAsciiLetter(c) || c == '_' || c == ':' || c == '.'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-'; }

// libxml2 cuts names at 100 bytes and reads the rest as another attribute; 64 counts more.
constexpr std::size_t kNameChunk = 64;

// The attributes libxml2 gives the start tag at `html[start]` ('<' then a name start),
// counted as libxml2 reads them (htmlParseStartTag), at least as many; stops counting beyond
// `stop_after`. `scanned` grows by the bytes read.
std::size_t CountTagAttributes(std::string_view html, std::size_t start, std::size_t stop_after,
                               std::size_t& scanned) {
  std::size_t i = start + 1;
  const std::size_t end = html.size();
  std::size_t count = 0;
  const std::size_t name_start = i;
  while (i < end && IsNameChar(html[i])) ++i;
  count += (i - name_start) / kNameChunk;  // A tag name libxml2 cuts: the rest is an attribute.
  while (count <= stop_after) {
    while (i < end && IsBlank(html[i])) ++i;
    if (i >= end || html[i] == '>' || (html[i] == '/' && i + 1 < end && html[i + 1] == '>')) {
      break;
    }
    ++count;  // Whether or not libxml2 takes it as an attribute.
    if (!IsNameStart(html[i])) {
      // libxml2 drops a bogus attribute up to the next blank or the end of the tag.
      while (i < end && !IsBlank(html[i]) && html[i] != '>' &&
             !(html[i] == '/' && i + 1 < end && html[i + 1] == '>')) {
        ++i;
      }
      continue;
    }
    const std::size_t name = i;
    while (i < end && IsNameChar(html[i])) ++i;
    count += (i - name - 1) / kNameChunk;
    std::size_t j = i;
    while (j < end && IsBlank(html[j])) ++j;
    if (j >= end || html[j] != '=') continue;  // No value; what follows is read afresh.
    i = j + 1;
    while (i < end && IsBlank(html[i])) ++i;
    if (i < end && (html[i] == '"' || html[i] == '\'')) {
      const std::size_t close = html.find(html[i], i + 1);
      i = close == std::string_view::npos ? end : close + 1;
    } else {
      while (i < end && !IsBlank(html[i]) && html[i] != '>') ++i;
    }
  }
  scanned += i - start;
  return count;
}

// Where `html` is cut to stay within `limits` (npos: not cut).
std::size_t BudgetCut(std::string_view html, const HtmlLimits& limits) {
  const std::size_t max_scanned = limits.max_scan_factor * html.size();
  std::size_t tags = 0;
  std::size_t attributes = 0;
  std::size_t scanned = 0;
  for (std::size_t i = html.find('<'); i != std::string_view::npos; i = html.find('<', i + 1)) {
    if (++tags > limits.max_tags) return i;
    if (i + 1 >= html.size() || !IsNameStart(html[i + 1])) continue;
    // Each '<' gets its own scan, also one inside a quoted value of an earlier tag: what libxml2
    // takes for markup or text there cannot hide a start tag from the count.
    const std::size_t n = CountTagAttributes(html, i, limits.max_tag_attributes, scanned);
    attributes += n;
    if (n > limits.max_tag_attributes || attributes > limits.max_attributes ||
        scanned > max_scanned) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

unsigned FlagsOf(const xmlChar* raw_name) {
  static constexpr std::string_view kBlocks[] = {
      "p",      "div",   "br",         "td",   "th",      "tr",      "li",     "ul",
      "ol",     "table", "h1",         "h2",   "h3",      "h4",      "h5",     "h6",
      "pre",    "title", "blockquote", "hr",   "dd",      "dt",      "center", "form",
      "option", "body",  "head",       "html", "section", "article", "header", "footer"};
  constexpr std::size_t kLongest = 10;  // "blockquote"; longer names have no flags.
  if (raw_name == nullptr) return 0;
  const auto* raw = reinterpret_cast<const char*>(raw_name);
  char lower[kLongest];
  std::size_t length = 0;
  for (; raw[length] != '\0'; ++length) {
    if (length == kLongest) return 0;
    lower[length] = AsciiLower(raw[length]);
  }
  const std::string_view name(lower, length);
  if (name == "script" || name == "style" || name == "noscript") return kSkipped;
  if (name == "a" || name == "link") return kHrefLink;
  if (name == "area") return kHrefLink | kAltText;
  if (name == "img") return kImage | kAltText;
  for (std::string_view block : kBlocks) {
    if (block == name) return kBlock;
  }
  return 0;
}

std::string_view WithinBudget(std::string_view html, const HtmlLimits& limits, bool& truncated) {
  if (const std::size_t cut = BudgetCut(html, limits); cut != std::string_view::npos) {
    html = html.substr(0, cut);
    truncated = true;
  }
  return html;
}

int ClampedSize(std::string_view html) {
  return static_cast<int>(std::min<std::size_t>(html.size(), INT_MAX));
}

void SilenceErrors() {
  thread_local const bool silenced = [] {  // libxml2's error handler is per thread.
    xmlSetGenericErrorFunc(nullptr, IgnoreError);
    return true;
  }();
  (void)silenced;
}

}  // namespace nbspamd::tokenizer::html_parse
