#include "tokenizer/html_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

namespace nbspamd::tokenizer {
namespace {

// libxml2 reports through a global handler; the parse options already silence it, this makes
// sure nothing reaches standard error.
void IgnoreError(void*, const char*, ...) {}

bool NameIs(const xmlNode* node, const char* name) {
  return node->name != nullptr && xmlStrcasecmp(node->name, BAD_CAST name) == 0;
}

// Elements after which a reader sees a break, so words on either side stay apart.
bool IsBlock(const xmlNode* node) {
  static constexpr const char* kBlocks[] = {
      "p",      "div",   "br",         "td",   "th",      "tr",      "li",     "ul",
      "ol",     "table", "h1",         "h2",   "h3",      "h4",      "h5",     "h6",
      "pre",    "title", "blockquote", "hr",   "dd",      "dt",      "center", "form",
      "option", "body",  "head",       "html", "section", "article", "header", "footer"};
  for (const char* name : kBlocks) {
    if (NameIs(node, name)) return true;
  }
  return false;
}

void AddAttribute(const xmlNode* node, const char* name, std::vector<std::string>& links) {
  xmlChar* value = xmlGetProp(node, BAD_CAST name);
  if (value == nullptr) return;
  links.emplace_back(reinterpret_cast<const char*>(value));
  xmlFree(value);
}

// Walks the tree without recursion (markup can nest very deep).
void Walk(xmlNode* root, HtmlContent& content) {
  xmlNode* node = root;
  while (node != nullptr) {
    bool descend = true;
    if (node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE) {
      if (node->content != nullptr) content.text += reinterpret_cast<const char*>(node->content);
    } else if (node->type == XML_ELEMENT_NODE) {
      if (NameIs(node, "script") || NameIs(node, "style") || NameIs(node, "noscript")) {
        descend = false;
      } else {
        if (NameIs(node, "a") || NameIs(node, "area") || NameIs(node, "link")) {
          AddAttribute(node, "href", content.links);
        }
        if (NameIs(node, "img")) {
          ++content.images;
          AddAttribute(node, "src", content.links);
        }
        if (NameIs(node, "img") || NameIs(node, "area")) {
          xmlChar* alt = xmlGetProp(node, BAD_CAST "alt");
          if (alt != nullptr) {
            content.text += ' ';
            content.text += reinterpret_cast<const char*>(alt);
            content.text += ' ';
            xmlFree(alt);
          }
        }
        if (IsBlock(node)) content.text += ' ';
      }
    }
    // Next node in document order: first child, else next sibling, else an ancestor's sibling.
    if (descend && node->type == XML_ELEMENT_NODE && node->children != nullptr) {
      node = node->children;
      continue;
    }
    while (node != nullptr && node != root && node->next == nullptr) {
      node = node->parent;
      if (node != nullptr && node->type == XML_ELEMENT_NODE && IsBlock(node)) content.text += ' ';
    }
    if (node == nullptr || node == root) break;
    node = node->next;
  }
}

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

// Parses `html` within `limits`; null for empty input. Sets `truncated` when it was cut.
htmlDocPtr Parse(std::string_view html, const HtmlLimits& limits, bool& truncated) {
  if (const std::size_t cut = BudgetCut(html, limits); cut != std::string_view::npos) {
    html = html.substr(0, cut);
    truncated = true;
  }
  if (html.empty()) return nullptr;
  thread_local const bool silenced = [] {  // libxml2's error handler is per thread.
    xmlSetGenericErrorFunc(nullptr, IgnoreError);
    return true;
  }();
  (void)silenced;
  const int size = static_cast<int>(std::min<std::size_t>(html.size(), INT_MAX));
  // Not HTML_PARSE_NOIMPLIED: without the implied <html><body>, libxml2 drops whitespace-only
  // text outside any element, gluing the words of "<a>BUY</a> <a>NOW</a>" into "BUYNOW".
  const int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                      HTML_PARSE_NONET | HTML_PARSE_COMPACT;
  return htmlReadMemory(html.data(), size, nullptr, "UTF-8", options);
}

}  // namespace

void InitializeHtmlParser() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

HtmlContent VisibleText(std::string_view html, const HtmlLimits& limits) {
  HtmlContent content;
  htmlDocPtr document = Parse(html, limits, content.truncated);
  if (document == nullptr) return content;
  for (xmlNode* node = document->children; node != nullptr; node = node->next) {
    Walk(node, content);
  }
  xmlFreeDoc(document);
  return content;
}

std::size_t CountParsedAttributes(std::string_view html, const HtmlLimits& limits) {
  bool truncated = false;
  htmlDocPtr document = Parse(html, limits, truncated);
  if (document == nullptr) return 0;
  std::size_t count = 0;
  // Every node, without recursion: children first, then siblings, then an ancestor's sibling.
  xmlNode* node = document->children;
  while (node != nullptr) {
    if (node->type == XML_ELEMENT_NODE) {
      for (const xmlAttr* attribute = node->properties; attribute != nullptr;
           attribute = attribute->next) {
        ++count;
      }
    }
    if (node->children != nullptr && node->type == XML_ELEMENT_NODE) {
      node = node->children;
      continue;
    }
    while (node != nullptr && node->next == nullptr) {
      node = node->parent;
      if (node != nullptr && reinterpret_cast<xmlNode*>(document) == node) node = nullptr;
    }
    if (node != nullptr) node = node->next;
  }
  xmlFreeDoc(document);
  return count;
}

}  // namespace nbspamd::tokenizer
