#include "tokenizer/html_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

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

}  // namespace

void InitializeHtmlParser() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

HtmlContent VisibleText(std::string_view html, std::size_t max_tags) {
  HtmlContent content;
  std::size_t tags = 0;
  for (std::size_t i = html.find('<'); i != std::string_view::npos; i = html.find('<', i + 1)) {
    if (++tags > max_tags) {
      html = html.substr(0, i);
      content.truncated = true;
      break;
    }
  }
  if (html.empty()) return content;
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
  htmlDocPtr document = htmlReadMemory(html.data(), size, nullptr, "UTF-8", options);
  if (document == nullptr) return content;
  for (xmlNode* node = document->children; node != nullptr; node = node->next) {
    Walk(node, content);
  }
  xmlFreeDoc(document);
  return content;
}

}  // namespace nbspamd::tokenizer
